/**
 * What the harness tells a peer process through its environment (`BENCH_PEER_CONFIG`, JSON).
 * Shared by the harness (which writes it) and the peers (which read it); nothing else.
 */
export interface ProviderPeerConfig {
  issuer: string;
  port: number;
  ccClient: { id: string; secret: string };
  /** The resource server that introspects opaque tokens, registered as a confidential client. */
  introspector: { id: string; secret: string };
  jwtResource: { id: string; scope: string };
  opaqueResource: { id: string; scope: string };
  accessTokenTtl: number;
}

export interface BarePgPeerConfig {
  port: number;
  databaseUrl: string;
  /** node-postgres pool size; the same as the orders service's default so the comparison is fair. */
  poolSize: number;
}

export function readPeerConfig<T>(): T {
  const raw = process.env.BENCH_PEER_CONFIG;
  if (!raw) throw new Error('BENCH_PEER_CONFIG is required');
  return JSON.parse(raw) as T;
}

/** A peer dies with the harness: its stdin is a pipe from the harness that ends when the harness goes. */
export function exitWithParent(close: () => Promise<unknown>): void {
  const shutdown = () => {
    void close().finally(() => process.exit(0));
  };
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
