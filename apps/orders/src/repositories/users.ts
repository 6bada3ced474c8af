import { asc, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { type OrderStatus, orders, users } from '../db/schema.js';

export interface NewOrderLine {
  quantity: number;
  /** Decimal string that fits numeric(12,2), computed by computeOrderTotal. */
  total: string;
}

export interface CreatedUser {
  id: number;
  email: string;
  orders: { id: number; quantity: number; total: string; status: OrderStatus }[];
}

export interface UserWithOrders {
  id: number;
  email: string;
  orderCount: number;
  orders: { id: number; total: string }[];
}

/**
 * Find-or-create in one statement. A check-then-insert would let two concurrent requests both
 * miss and one of them fail on the unique index; ON CONFLICT makes the loser wait for the winner's
 * row and return it. The no-op update is there because DO NOTHING returns no row on conflict.
 */
export async function findOrCreateUserIdByEmail(db: AppDatabase, email: string): Promise<number> {
  const [row] = await db
    .insert(users)
    .values({ email })
    .onConflictDoUpdate({ target: users.email, set: { email: sql`excluded.email` } })
    .returning({ id: users.id });
  return row!.id;
}

/**
 * Inserts the user and all its orders. Callers run it inside a transaction: a failing order
 * (constraint, overflow) must take the user row down with it.
 * A duplicate e-mail surfaces as the database's unique violation (SQLSTATE 23505).
 */
export async function insertUserWithOrders(
  db: AppDatabase,
  email: string,
  orderLines: NewOrderLine[],
): Promise<CreatedUser> {
  const [user] = await db.insert(users).values({ email }).returning();
  if (orderLines.length === 0) return { id: user!.id, email: user!.email, orders: [] };
  const insertedOrders = await db
    .insert(orders)
    .values(orderLines.map((line) => ({ userId: user!.id, quantity: line.quantity, total: line.total })))
    .returning({ id: orders.id, quantity: orders.quantity, total: orders.total, status: orders.status });
  return { id: user!.id, email: user!.email, orders: insertedOrders };
}

/**
 * Every user with its orders in one SQL statement (the relational query aggregates the orders
 * with a lateral join), so the query count does not grow with the number of users.
 */
export async function listUsersWithOrders(db: AppDatabase): Promise<UserWithOrders[]> {
  const rows = await db.query.users.findMany({
    orderBy: [asc(users.id)],
    with: { orders: { columns: { id: true, total: true }, orderBy: [asc(orders.id)] } },
  });
  return rows.map((user) => ({
    id: user.id,
    email: user.email,
    orderCount: user.orders.length,
    orders: user.orders,
  }));
}
