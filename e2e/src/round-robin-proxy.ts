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
  let next = 0;
  let backendPorts = [...initialPorts];
  const counts: Record<number, number> = Object.fromEntries(backendPorts.map((backend) => [backend, 0]));
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const backendPort = backendPorts[next++ % backendPorts.length]!;
    counts[backendPort] = (counts[backendPort] ?? 0) + 1;
    const upstream = createConnection({ host: '127.0.0.1', port: backendPort });
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
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => ({ ...counts }),
    setBackends(ports) {
      backendPorts = [...ports];
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
