import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** A stand-in for UPSTREAM_API_URL that records what the BFF sends and answers as told. */
export interface StubUpstream {
  readonly url: string;
  /** Authorization headers received, in order. */
  authorizations(): string[];
  respond(handler: (request: IncomingMessage, response: ServerResponse) => void): void;
  close(): Promise<void>;
}

export async function startStubUpstream(): Promise<StubUpstream> {
  const authorizations: string[] = [];
  let handler = (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  };
  const server: Server = createServer((request, response) => {
    authorizations.push(request.headers.authorization ?? '');
    handler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/orders`,
    authorizations: () => [...authorizations],
    respond(next) {
      handler = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
