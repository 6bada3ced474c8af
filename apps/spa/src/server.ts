import { createServer } from 'node:http';
import { prettyTransport } from '@oidc-orders/service-kit';
import pino from 'pino';
import { createSpaHandler } from './app.js';
import { parseSpaConfig, SpaConfigError } from './config.js';

/**
 * pino, as the two apps log through Fastify: JSON lines (level, time, msg) under CI, in production
 * and under `pnpm dev` (which reads and formats them), pino-pretty with the service named when a
 * person runs it in a terminal in development. Start-up failures stay one plain line on stderr.
 */
const log = pino({
  name: 'spa',
  ...(process.env.NODE_ENV === 'development' && process.stdout.isTTY === true && !process.env.CI
    ? {
        transport: prettyTransport('spa'),
      }
    : {}),
});

let config: ReturnType<typeof parseSpaConfig>;
try {
  config = parseSpaConfig(process.env);
} catch (error) {
  if (!(error instanceof SpaConfigError)) throw error;
  console.error(`spa: cannot start: ${error.message}`);
  process.exit(1);
}

const handler = createSpaHandler(config);
const server = createServer((request, response) => {
  handler(request, response).catch((error: unknown) => {
    log.error({ err: error, url: request.url?.split('?')[0] }, 'request failed');
    if (!response.headersSent) response.writeHead(500).end();
  });
});

// One line naming the variable, never a stack trace (a second `pnpm dev`, another program on the port).
server.once('error', (error: NodeJS.ErrnoException) => {
  const reason =
    error.code === 'EADDRINUSE' ? 'is already in use' : `cannot be opened (${error.code ?? error.message})`;
  console.error(
    `spa: cannot start: ${config.host}:${config.port} ${reason}: set PORT (SPA_PORT for pnpm dev) or HOST`,
  );
  process.exit(1);
});

server.listen(config.port, config.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  log.info({ port, issuer: config.issuer, clientId: config.clientId }, 'spa listening');
});

function shutdown(signal: string) {
  log.info({ signal }, 'spa shutting down');
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(1), 5000).unref();
}
process.once('SIGTERM', () => shutdown('SIGTERM'));
process.once('SIGINT', () => shutdown('SIGINT'));
