/**
 * Ceiling for the orders workloads: a bare Fastify route that runs the orders service's own single
 * SQL statement through a node-postgres pool, with no validation, API key, ORM or deadline. The
 * statements are the ones apps/orders/src/repositories/orders.ts prepares (`insertOrderForEmail`,
 * `listOrdersByEmail`), as named prepared statements, on the service's own schema
 * (`createBarePgSchema` runs its migrations): what is left between the two is the service's code.
 * Run as its own process: `node --import tsx src/peers/bare-pg.ts` with `BENCH_PEER_CONFIG`.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { type BarePgPeerConfig, exitWithParent, readPeerConfig } from './peer-config.js';

const config = readPeerConfig<BarePgPeerConfig>();
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.poolSize });

// Finds or creates the user by e-mail and inserts the order in one statement.
const PLACE_ORDER = `
  with new_user as (
    insert into "users" (email) values ($1::text)
    on conflict (email) do nothing
    returning id
  ), order_user as (
    select id from new_user
    union all
    select id from "users" where email = $1::text
    limit 1
  )
  insert into "orders" (user_id, quantity, total)
  select id, $2::integer, $3::numeric from order_user
  returning id, quantity, status`;
const LIST_ORDERS = `
  select "orders"."id", "orders"."quantity", "orders"."total", "orders"."status", "orders"."created_at"
  from "orders" inner join "users" on "orders"."user_id" = "users"."id"
  where "users"."email" = $1
  order by "orders"."id" asc`;

interface PlaceOrder {
  email: string;
  quantity: number;
}

const app = Fastify({ logger: false });
app.get('/health/ready', async () => {
  await pool.query('SELECT 1');
  return { status: 'ok' };
});
app.post<{ Body: PlaceOrder }>('/orders', async (request, reply) => {
  const { email, quantity } = request.body;
  const { rows } = await pool.query({
    name: 'place_order',
    text: PLACE_ORDER,
    values: [email.toLowerCase(), quantity, (quantity * 9.99).toFixed(2)],
  });
  const order = rows[0];
  return reply.code(201).send({ ...order, email });
});
app.get<{ Querystring: { email?: string } }>('/orders', async (request) => {
  const { rows } = await pool.query({
    name: 'list_orders',
    text: LIST_ORDERS,
    values: [(request.query.email ?? '').toLowerCase()],
  });
  return rows;
});

await app.listen({ port: config.port, host: '127.0.0.1' });
exitWithParent(async () => {
  await app.close();
  await pool.end();
});
