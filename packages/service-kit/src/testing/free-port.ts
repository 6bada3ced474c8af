import { createServer } from 'node:net';

/** A loopback port nothing listens on right now (bound once on 127.0.0.1, then released). */
export async function findFreePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}
