import { asc, eq, sql } from 'drizzle-orm';
import { PgDialect, type PgPreparedQuery, type PreparedQueryConfig } from 'drizzle-orm/pg-core';
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

type PlacedRow = { id: number; quantity: number; status: OrderStatus };
type PlaceOrderQuery = PgPreparedQuery<PreparedQueryConfig & { execute: { rows: PlacedRow[] } }>;

/**
 * Finds or creates the user by e-mail and inserts the order in ONE statement (one round trip, one
 * implicit transaction), prepared once per database: PostgreSQL parses and plans it once per
 * connection and drizzle builds no SQL per request.
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
  const result = await placeOrderQuery(db).execute({ ...order });
  return result.rows[0];
}

const placeOrderQueries = new WeakMap<AppDatabase, PlaceOrderQuery>();
const dialect = new PgDialect();

function placeOrderQuery(db: AppDatabase): PlaceOrderQuery {
  let query = placeOrderQueries.get(db);
  if (!query) {
    const email = sql.placeholder('email');
    const statement = sql`
      with new_user as (
        insert into ${users} (email) values (${email}::text)
        on conflict (email) do nothing
        returning id
      ), order_user as (
        select id from new_user
        union all
        select id from ${users} where email = ${email}::text
        limit 1
      )
      insert into ${orders} (user_id, quantity, total)
      select id, ${sql.placeholder('quantity')}::integer, ${sql.placeholder('total')}::numeric from order_user
      returning id, quantity, status`;
    query = db._.session.prepareQuery(dialect.sqlToQuery(statement), undefined, 'orders_place_order', false);
    placeOrderQueries.set(db, query);
  }
  return query;
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
