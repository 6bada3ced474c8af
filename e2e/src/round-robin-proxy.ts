import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP load balancer in front of several instances: each new connection goes to the next
 * backend in turn (what a gateway does without sticky sessions). Keep-alive connections stay on
 * the backend they were given, as with any L4 balancer.
 */
export interface RoundRobinProxy {
  readonly port: number;
  /** Connections handed to each backend port so far. */
  connections(): Record<number, number>;
  /**
   * Replaces the backends new connections go to (a rolling upgrade adds the new instance, then
   * takes the old one out before stopping it); connections already open stay where they are.
   */
  setBackends(ports: number[]): void;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(initialPorts: number[], port = 0): Promise<RoundRobinProxy> {
  const rotation = backendRotation(initialPorts);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: rotation.next() });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      // A backend that is down (or a client that went away) closes the other side too.
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return listenAsProxy(server, sockets, rotation, port);
}

export interface BackendRotation {
  /** The next backend's port, counted. */
  next(): number;
  counts(): Record<number, number>;
  set(ports: number[]): void;
}

/** Round robin over backend ports that can be replaced while it runs (see `setBackends`). */
export function backendRotation(initialPorts: number[]): BackendRotation {
  let index = 0;
  let ports = [...initialPorts];
  const counts: Record<number, number> = Object.fromEntries(ports.map((backend) => [backend, 0]));
  return {
    next() {
      const backend = ports[index++ % ports.length]!;
      counts[backend] = (counts[backend] ?? 0) + 1;
      return backend;
    },
    counts: () => ({ ...counts }),
    set(replacement) {
      ports = [...replacement];
    },
  };
}

/** Listens on loopback; closing destroys every socket still open (`sockets`), then the server. */
export async function listenAsProxy(
  server: Server,
  sockets: Set<Socket>,
  rotation: BackendRotation,
  port: number,
): Promise<RoundRobinProxy> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: rotation.counts,
    setBackends: rotation.set,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
