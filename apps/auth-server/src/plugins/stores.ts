import type { Clock, ScryptCost } from '@oidc-orders/oauth-core';
import { adminApiResource, createSecretHasher, type SecretHasher } from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import type { DirectoryConfig } from '../directory/config.js';
import type { GuardedFetchOptions } from '../http/guarded-fetch.js';
import { deriveSecretHashingKey } from '../keys/key-encryption.js';
import { endSessionsOfDisabledUsers } from '../logout/user-sign-out.js';
import type { SeedDocument } from '../schemas/seed.js';
import { applySeed, parseSeedDocument } from '../seed.js';
import { withBuiltInResources } from '../storage/built-in-resources.js';
import { createDrizzleStores, type DrizzleStores } from '../storage/drizzle/stores.js';
import { withMetadataDocumentClients } from '../storage/metadata-document-clients.js';

declare module 'fastify' {
  interface FastifyInstance {
    stores: DrizzleStores;
    /** Hashes and verifies client and resource secrets (keyed HMAC; key derived from KEY_ENCRYPTION_KEY). */
    secretHasher: SecretHasher;
    /**
     * Applies a seed document (idempotent upsert; entries it no longer names are disabled) and
     * refreshes the cached client/resource registry.
     */
    reseed(seed: SeedDocument): Promise<void>;
  }
}

/**
 * Limits on fetching a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document
 * §6: a few KiB, a few seconds); tests shorten them and give their own DNS answers.
 */
export const METADATA_DOCUMENT_FETCH = { maxBytes: 5 * 1024, timeoutMs: 5_000 } as const;
const METADATA_DOCUMENT_MAX_CACHE_SECONDS = 3_600;
const METADATA_DOCUMENT_MAX_ENTRIES = 1_000;

export interface StoresPluginOptions {
  clock: Clock;
  /** Test seam: the guarded fetch's limits and resolver for metadata documents. */
  metadataDocumentFetch?: Partial<Omit<GuardedFetchOptions, 'trustedOrigins'>> | undefined;
  /** The seed to apply at start (read from SEED_FILE, or given in code by tests). */
  seed?: SeedDocument | undefined;
  /** scrypt cost for the seed's plain-text passwords (applySeed's default when undefined). */
  seedPasswordCost?: ScryptCost | undefined;
}

/** The directory's servers as a log names them: scheme, host and port (never a user-info part). */
function directoryServers(directory: DirectoryConfig | null): string[] {
  return (directory?.urls ?? []).map((url) => {
    const { protocol, host } = new URL(url);
    return `${protocol}//${host}`;
  });
}

/** The oauth-core stores on Drizzle, and the seed applied at start (SEED_FILE). */
export const storesPlugin = fp<StoresPluginOptions>(
  async (app, options) => {
    const stores = createDrizzleStores(app.database.db);
    // The administration API (src/routes/admin-api/) is a resource of this server's own.
    stores.resources = withBuiltInResources(stores.resources, [adminApiResource(app.config.issuer)]);
    const documents = options.seed?.client_id_metadata_documents;
    if (documents) {
      stores.clients = withMetadataDocumentClients(stores.clients, {
        policy: {
          allowedOrigins: documents.allowed_origins,
          scopes: documents.scope.split(' ').filter(Boolean),
        },
        // Exactly listed origins (never a wildcard) may be loopback or private: a developer's machine.
        fetch: {
          ...METADATA_DOCUMENT_FETCH,
          trustedOrigins: documents.allowed_origins.filter((origin) => !origin.includes('*')),
          ...options.metadataDocumentFetch,
        },
        lifetimes: app.config.lifetimes,
        maxCacheSeconds: METADATA_DOCUMENT_MAX_CACHE_SECONDS,
        maxEntries: METADATA_DOCUMENT_MAX_ENTRIES,
        nowMs: () => options.clock.nowSeconds() * 1000,
        log: app.log,
      });
    }
    const secretHasher = createSecretHasher(deriveSecretHashingKey(app.config.keyEncryptionKey));

    const reseed = async (seed: SeedDocument) => {
      const summary = await applySeed(app.database.db, parseSeedDocument(seed), {
        secrets: secretHasher,
        lifetimes: app.config.lifetimes,
        now: options.clock.nowSeconds(),
        keyEncryptionKey: app.config.keyEncryptionKey,
        ...(options.seedPasswordCost ? { passwordCost: options.seedPasswordCost } : {}),
      });
      // Clients and resources are served from memory on the hot path; drop the old snapshot.
      stores.invalidateRegistry();
      // Identifiers only: secrets and passwords never reach the log. The sign-in sources beside
      // the seed's users are named too, so an operator sees at start which ones this run has.
      app.log.info(
        {
          clients: summary.clientIds,
          resources: summary.resourceIds,
          users: summary.usernames,
          identity_providers: (seed.identity_providers ?? []).map((provider) => provider.id),
          directory: directoryServers(app.config.directory),
        },
        'seed applied',
      );
      const { disabled } = summary;
      if (disabled.clients.length + disabled.resources.length + disabled.users.length > 0) {
        // By id (user `sub`), never secrets: what the file no longer names and is now disabled.
        app.log.warn(
          { clients: disabled.clients, resources: disabled.resources, users: disabled.users },
          'seed: disabled entries the seed file no longer names',
        );
      }
      // At start this runs before signing keys are loaded; the logout plugin signs those users out
      // once it can. A later reseed (tests) signs them out here.
      if (disabled.users.length > 0 && app.hasDecorator('userSignOut')) {
        await endSessionsOfDisabledUsers(app.log, app.userSignOut);
      }
    };

    app.decorate('stores', stores);
    app.decorate('secretHasher', secretHasher);
    app.decorate('reseed', reseed);

    if (options.seed) await reseed(options.seed);
  },
  { name: 'stores', fastify: '5.x', dependencies: ['config', 'db'] },
);
