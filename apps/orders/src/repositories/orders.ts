import { asc, eq, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { type OrderStatus, orders, users } from '../db/schema.js';

export interface NewOrder {
  userId: number;
  quantity: number;
  total: string;
}

export interface StoredOrder {
  id: number;
  quantity: number;
  total: string;
  status: OrderStatus;
  createdAt: Date;
}

export interface OrderWithEmail {
  id: number;
  total: string;
  createdAt: Date;
  email: string;
}

export async function insertOrder(db: AppDatabase, order: NewOrder): Promise<StoredOrder> {
  const [row] = await db.insert(orders).values(order).returning({
    id: orders.id,
    quantity: orders.quantity,
    total: orders.total,
    status: orders.status,
    createdAt: orders.createdAt,
  });
  return row!;
}

export interface NewOrderForEmail {
  /** Lower-cased by the caller. */
  email: string;
  quantity: number;
  total: string;
}

/**
 * Finds or creates the user by e-mail and inserts the order in ONE statement (one round trip, one
 * implicit transaction), prepared once per database under a name (Drizzle's public `.prepare`):
 * PostgreSQL parses and plans it once per connection and drizzle builds no SQL per request.
 *
 * `ON CONFLICT DO NOTHING` leaves an existing user row alone (a `DO UPDATE` would write a new row
 * version on every order). A statement's snapshot is taken when it starts, so when a concurrent
 * statement inserted the same new e-mail and committed while this one waited on the unique index,
 * neither the insert nor the select sees a user and no order is inserted: `undefined`, and the
 * caller runs the statement again, which then sees the committed user.
 */
export async function insertOrderForEmail(
  db: AppDatabase,
  order: NewOrderForEmail,
): Promise<{ id: number; quantity: number; status: OrderStatus } | undefined> {
  const [placed] = await placeOrderQuery(db).execute({ ...order });
  return placed;
}

const placeOrderQueries = new WeakMap<AppDatabase, ReturnType<typeof preparePlaceOrder>>();

function placeOrderQuery(db: AppDatabase) {
  let query = placeOrderQueries.get(db);
  if (!query) {
    query = preparePlaceOrder(db);
    placeOrderQueries.set(db, query);
  }
  return query;
}

/**
 * `with new_user as (insert … on conflict do nothing returning id), order_user as (new_user's id,
 * else the existing user's), placed as (insert into orders … select … from order_user returning …)
 * select … from placed`. PostgreSQL runs every data-modifying CTE exactly once, in the statement's
 * one snapshot, whether or not the outer select reads it. The orders insert is written in SQL:
 * Drizzle's `insert().select()` lists every column of the table, the defaulted ones included.
 */
function preparePlaceOrder(db: AppDatabase) {
  const email = sql.placeholder('email');
  const newUser = db
    .$with('new_user')
    .as(
      db
        .insert(users)
        .values({ email })
        .onConflictDoNothing({ target: users.email })
        .returning({ id: users.id }),
    );
  const orderUser = db.$with('order_user').as(
    db
      .select({ id: newUser.id })
      .from(newUser)
      .unionAll(db.select({ id: users.id }).from(users).where(eq(users.email, email)))
      .limit(1),
  );
  const placed = db
    .$with('placed', { id: orders.id, quantity: orders.quantity, status: orders.status })
    .as(sql`
    insert into ${orders} (user_id, quantity, total)
    select ${orderUser.id}, ${sql.placeholder('quantity')}::integer, ${sql.placeholder('total')}::numeric
    from ${orderUser}
    returning id, quantity, status`);
  return db.with(newUser, orderUser, placed).select().from(placed).prepare('orders_place_order');
}

export async function findOrderWithEmail(
  db: AppDatabase,
  orderId: number,
): Promise<OrderWithEmail | undefined> {
  const [row] = await db
    .select({ id: orders.id, total: orders.total, createdAt: orders.createdAt, email: users.email })
    .from(orders)
    .innerJoin(users, eq(orders.userId, users.id))
    .where(eq(orders.id, orderId));
  return row;
}

export interface OwnOrder {
  id: number;
  quantity: number;
  total: string;
  status: OrderStatus;
  createdAt: Date;
}

/**
 * The orders of the user with this (lower-cased) e-mail, oldest first; one indexed join. Prepared
 * once per database: drizzle builds the SQL once, PostgreSQL plans it once per connection.
 */
export async function listOrdersByEmail(db: AppDatabase, email: string): Promise<OwnOrder[]> {
  return listOrdersQuery(db).execute({ email });
}

const listOrdersQueries = new WeakMap<AppDatabase, ReturnType<typeof prepareListOrders>>();

function listOrdersQuery(db: AppDatabase) {
  let query = listOrdersQueries.get(db);
  if (!query) {
    query = prepareListOrders(db);
    listOrdersQueries.set(db, query);
  }
  return query;
}

function prepareListOrders(db: AppDatabase) {
  return db
    .select({
      id: orders.id,
      quantity: orders.quantity,
      total: orders.total,
      status: orders.status,
      createdAt: orders.createdAt,
    })
    .from(orders)
    .innerJoin(users, eq(orders.userId, users.id))
    .where(eq(users.email, sql.placeholder('email')))
    .orderBy(asc(orders.id))
    .prepare('orders_list_by_email');
}
