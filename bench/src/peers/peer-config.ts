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
  /** The browser client of the `refresh` and `code` workloads (authorization code + PKCE, rotation). */
  webClient: { id: string; secret: string; redirectUri: string };
  /** The one account the login page accepts. */
  user: { username: string; password: string };
  /** Where the provider keeps its state: the library's in-memory adapter, or Redis at this URL. */
  store: { kind: 'memory' } | { kind: 'redis'; url: string };
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
