export {
  classifyDatabaseFailure,
  type DatabaseFailure,
  type DatabaseFailureKind,
  DatabaseUnavailableError,
  describeDatabaseFailure,
  isDatabaseUnavailable,
} from './database-unavailable.js';
export { type DatabaseLocation, describeDatabaseLocation, parseDatabaseUrl } from './database-url.js';
export { DESIGN_TOKENS_CSS, withDesignTokens } from './design-tokens.js';
export {
  DEFAULT_FAILOVER_RETRY_WINDOW_MS,
  databaseFailoverTally,
  FAILOVER_RETRY_PARAMETER,
  FailoverPool,
  failoverRetryWindow,
  isRepeatableStatement,
} from './failover-pool.js';
export {
  type GracefulShutdownOptions,
  gracefulShutdown,
  type ShutdownLogger,
  shutDownGracefullyOnSignals,
} from './graceful-shutdown.js';
export { prettyTransport } from './logging.js';
export { isLoopback, type MetricsOptions, type PoolStats, registerMetrics } from './metrics.js';
export { MIGRATE_USAGE, type MigrateCommandOptions, runMigrateCommand } from './migrate-command.js';
export {
  type CommittedMigration,
  type Contraction,
  contractionReason,
  lastAppliedMigration,
  type MigrationPlan,
  planMigrations,
  readCommittedMigrations,
} from './migration-plan.js';
export {
  type BoundedDatabase,
  type Database,
  type DatabaseDefinition,
  type DatabaseHandle,
  type OpenDatabaseOptions,
  openDatabase,
} from './open-database.js';
export {
  OPERATIONS_ROUTE_DESCRIPTIONS,
  OPERATIONS_TAG,
  type OpenApiOptions,
  openApiPath,
  type RouteDescription,
  registerOpenApi,
} from './openapi.js';
export {
  claimPgliteDirectory,
  lockFileOf,
  PgliteDirectoryInUseError,
  type PgliteDirectoryOwner,
} from './pglite-directory-lock.js';
export { type ReadSecretFile, resolveSecretFiles, SecretFileError } from './secret-files.js';
export { addSecurityHeaders } from './security-headers.js';
export {
  type ActiveSpanAccess,
  activeTraceIds,
  annotateActiveSpan,
  annotateActiveTrace,
  inClientSpan,
  isTracingOn,
  type OperationSpan,
  type SpanAttributeValue,
  type TraceIds,
} from './tracing/active-span.js';
export type { SpanRedaction } from './tracing/span-scrubbing.js';
export type { Tracing, TracingOptions } from './tracing/start-tracing.js';
export { startTracingWhenConfigured } from './tracing/when-configured.js';
export {
  TRANSACTION_POOLER_PARAMETER,
  transactionPoolerMode,
  UnnamedStatementClient,
} from './transaction-pooler.js';
export { parseTrustProxy, type TrustProxy, toFastifyTrustProxy } from './trust-proxy.js';
