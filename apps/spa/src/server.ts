import { createServer } from 'node:http';
import { createSpaHandler } from './app.js';
import { parseSpaConfig, SpaConfigError } from './config.js';

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
    console.error('spa: request failed', error);
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
  console.log(
    JSON.stringify({
      level: 'info',
      msg: 'spa listening',
      port,
      issuer: config.issuer,
      clientId: config.clientId,
    }),
  );
});

function shutdown(signal: string) {
  console.log(JSON.stringify({ level: 'info', msg: 'spa shutting down', signal }));
  server.close(() => process.exit(0));
  server.closeAllConnections();
  setTimeout(() => process.exit(1), 5000).unref();
}
process.once('SIGTERM', () => shutdown('SIGTERM'));
process.once('SIGINT', () => shutdown('SIGINT'));
