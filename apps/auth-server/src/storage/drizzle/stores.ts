import type {
  Client,
  ClientStore,
  KeyStore,
  ProtocolStores,
  ResourceStore,
  TokenStores,
} from '@oidc-orders/oauth-core';
import { createUserStore } from '../../accounts/drizzle/user-store.js';
import type { AppDatabase } from '../../db/client.js';
import { createAccessTokenStore } from './access-token-store.js';
import { createAuthorizationCodeStore } from './authorization-code-store.js';
import { createCoalescedLookups } from './coalesced-lookups.js';
import { createDeviceCodeStore } from './device-code-store.js';
import { createGrantStore } from './grant-store.js';
import { createKeyStore } from './key-store.js';
import { createHotPathStatements, createRedemptionStatements } from './prepared-statements.js';
import { createRefreshTokenStore } from './refresh-token-store.js';
import { createRegistrySnapshot } from './registry.js';

export { createKeyStore, signingKeyFromRow } from './key-store.js';
export { type RegistryRecords, writeRegistryRecords } from './registry.js';

/**
 * The oauth-core store contracts on Drizzle (node-postgres or PGlite). Every method is typed on
 * `PgDatabase`, so the same code runs on the pool and inside a transaction.
 *
 * Clients and resources form a small registry that changes only when the seed is applied; they are
 * read from an in-memory snapshot so the token endpoint (the hot path) costs no database round for
 * them. The snapshot is reloaded after `invalidateRegistry()` (called by the seed loader) or after
 * `registryTtlMs`, which bounds staleness when another instance reseeded.
 */
export interface DrizzleStores extends ProtocolStores {
  keys: KeyStore;
  invalidateRegistry(): void;
  /** Every client, from the snapshot (CORS origins are derived from it). */
  listClients(): Promise<readonly Client[]>;
}

export interface DrizzleStoresOptions {
  /** Upper bound on how long a registry snapshot is used; default 60 s. */
  registryTtlMs?: number;
  /** Monotonic milliseconds, injectable for tests. */
  nowMs?: () => number;
}

export function createDrizzleStores(db: AppDatabase, options: DrizzleStoresOptions = {}): DrizzleStores {
  const registry = createRegistrySnapshot(
    db,
    options.registryTtlMs ?? 60_000,
    options.nowMs ?? (() => performance.now()),
  );

  const clientStore: ClientStore = {
    async findClient(clientId) {
      return (await registry.get()).clients.get(clientId) ?? null;
    },
  };
  const resourceStore: ResourceStore = {
    async findResource(id) {
      return (await registry.get()).resources.get(id) ?? null;
    },
    async listResources() {
      return [...(await registry.get()).resources.values()];
    },
  };

  return {
    clients: clientStore,
    resources: resourceStore,
    users: createUserStore(db),
    ...createTokenStores(db, { inTransaction: false }),
    keys: createKeyStore(db),
    transaction: (work) => db.transaction((tx) => work(createTokenStores(tx, { inTransaction: true }))),
    invalidateRegistry: () => registry.invalidate(),
    listClients: async () => [...(await registry.get()).clients.values()],
  };
}

/**
 * The grant, code and token stores on one executor: the pool, or one transaction. On the pool the
 * reads by token hash are coalesced (drizzle/coalesced-lookups.ts); a transaction has one
 * connection and reads one statement at a time.
 */
function createTokenStores(db: AppDatabase, context: { inTransaction: boolean }): TokenStores {
  const statements = createRedemptionStatements(db);
  const hot = createHotPathStatements(db);
  const lookups = context.inTransaction ? null : createCoalescedLookups(db);
  return {
    grants: createGrantStore(db, hot, context),
    codes: createAuthorizationCodeStore(db, hot, statements, lookups),
    refreshTokens: createRefreshTokenStore(db, hot, statements, lookups),
    accessTokens: createAccessTokenStore(db, hot, lookups),
    deviceCodes: createDeviceCodeStore(db),
  };
}
