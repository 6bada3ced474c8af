/**
 * The test kit both apps, the CLI and the end-to-end suites share (`@oidc-orders/service-kit/testing`):
 * pooled PGlite databases for in-process tests, free ports, per-test PostgreSQL databases, the
 * real services as child processes, a Patroni cluster (etcd, three PostgreSQL nodes, HAProxy) and PgBouncer. Never import this from production code.
 */
export * from './free-port.js';
export * from './node-process.js';
export * from './patroni-cluster.js';
export * from './pgbouncer.js';
export * from './pglite-pool.js';
export * from './services.js';
export * from './test-database.js';
