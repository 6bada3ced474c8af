import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import type { Socket } from 'node:net';
import { backendRotation, listenAsProxy, type RoundRobinProxy } from './round-robin-proxy.js';

/** RFC 9110 §7.6.1: connection-specific fields end at each hop. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
]);

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/**
 * An HTTP round-robin gateway, as the deployed nginx behaves (deploy/nginx: no upstream keep-alive):
 * clients keep their connections to the gateway, and every request goes to the next backend over a
 * connection of its own. So a backend taken out with `setBackends` gets no further request even
 * from clients that stay connected, which a TCP balancer cannot promise.
 */
export async function startHttpGateway(initialPorts: number[], port = 0): Promise<RoundRobinProxy> {
  const rotation = backendRotation(initialPorts);
  const sockets = new Set<Socket>();
  const server = createServer((incoming, outgoing) => {
    const backend = rotation.next();
    const upstream = request(
      {
        host: '127.0.0.1',
        port: backend,
        method: incoming.method,
        path: incoming.url,
        headers: endToEnd(incoming.headers),
        agent: false,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(outgoing);
      },
    );
    upstream.on('error', () => {
      if (!outgoing.headersSent) outgoing.writeHead(502).end();
      else outgoing.destroy();
    });
    incoming.pipe(upstream);
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return listenAsProxy(server, sockets, rotation, port);
}
