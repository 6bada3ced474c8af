/**
 * The test kit both apps, the CLI, the end-to-end suites and the benchmarks share
 * (`@oidc-orders/service-kit/testing`): pooled PGlite databases for in-process tests, free ports,
 * per-test PostgreSQL databases, the real services as child processes, and the fixtures of the
 * external systems (OpenLDAP, an SMTP server, an upstream OpenID provider, an MIT Kerberos realm,
 * Prometheus, an OTLP receiver, a throw-away certificate), each naming the entry of
 * deploy/ci/system-packages.json it runs. Never import this from production code: its
 * dependencies (ldapts, oidc-provider, smtp-server, mailparser) are development dependencies.
 */
export * from './free-port.js';
export * from './kerberos-realm.js';
export * from './node-process.js';
export * from './otlp-receiver.js';
export * from './pglite-pool.js';
export * from './prometheus.js';
export * from './services.js';
export * from './slapd.js';
export * from './smtp-server.js';
export * from './system-programs.js';
export * from './test-database.js';
export * from './throw-away-certificate.js';
export * from './upstream-provider.js';
