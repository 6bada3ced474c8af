/**
 * Ceiling for the orders workloads: a bare Fastify route that runs one SQL statement through a
 * node-postgres pool, with no validation, transaction or ORM. `POST /orders` is one INSERT,
 * `GET /orders` one indexed SELECT of a user's orders, on the table `createBarePgSchema` makes.
 * Run as its own process: `node --import tsx src/peers/bare-pg.ts` with `BENCH_PEER_CONFIG`.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { type BarePgPeerConfig, exitWithParent, readPeerConfig } from './peer-config.js';

const config = readPeerConfig<BarePgPeerConfig>();
const pool = new pg.Pool({ connectionString: config.databaseUrl, max: config.poolSize });

const INSERT_ORDER =
  'INSERT INTO bench_orders (email, quantity, total) VALUES ($1, $2, $3) RETURNING id, email, quantity, status';
const LIST_ORDERS =
  'SELECT id, email, quantity, total, status, created_at FROM bench_orders WHERE email = $1 ORDER BY id DESC LIMIT 100';

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
  const { rows } = await pool.query(INSERT_ORDER, [email, quantity, (quantity * 9.99).toFixed(2)]);
  return reply.code(201).send(rows[0]);
});
app.get<{ Querystring: { email?: string } }>('/orders', async (request) => {
  const { rows } = await pool.query(LIST_ORDERS, [request.query.email ?? '']);
  return rows;
});

await app.listen({ port: config.port, host: '127.0.0.1' });
exitWithParent(async () => {
  await app.close();
  await pool.end();
});
