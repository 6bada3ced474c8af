/**
 * Ceiling: a bare Fastify route answering a small JSON body, no plugins. Whatever our servers do
 * on top of HTTP is measured against this on the same machine with the same load generator.
 * Run as its own process: `node --import tsx src/peers/bare-fastify.ts` with `PORT`.
 */
import Fastify from 'fastify';
import { exitWithParent } from './peer-config.js';

const app = Fastify({ logger: false });
app.get('/health/ready', async () => ({ status: 'ok' }));
app.get('/hello', async () => ({ hello: 'world' }));

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
exitWithParent(() => app.close());
