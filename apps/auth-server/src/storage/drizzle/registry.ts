import type {
  Client,
  ClientAuthenticationMethod,
  GrantType,
  Resource,
  SigningAlg,
  TokenExchangePolicy,
  TokenTypeUri,
  User,
} from '@oidc-orders/oauth-core';
import { isNull } from 'drizzle-orm';
import { upsertSeedUsers } from '../../accounts/drizzle/account-joins.js';
import type { AppDatabase } from '../../db/client.js';
import { clients, resources } from '../../db/schema.js';

export interface RegistryRecords {
  clients?: readonly Client[];
  resources?: readonly Resource[];
  users?: readonly User[];
}

/**
 * Inserts or replaces clients, resources and users, all in one transaction. The caller invalidates
 * the registry snapshot of any stores reading this database (`invalidateRegistry`).
 */
export async function writeRegistryRecords(
  db: AppDatabase,
  records: RegistryRecords,
  now: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    for (const client of records.clients ?? []) {
      const row = {
        ...client,
        redirectUris: [...client.redirectUris],
        postLogoutRedirectUris: [...client.postLogoutRedirectUris],
        grantTypes: [...client.grantTypes],
        scopes: [...client.scopes],
        allowedCorsOrigins: [...client.allowedCorsOrigins],
        tokenExchange: tokenExchangeRow(client.tokenExchange),
        authMethods: [...(client.authMethods ?? [])],
        jwks: client.jwks == null ? null : { keys: [...client.jwks.keys] },
        jwksUri: client.jwksUri ?? null,
        requestUris: [...(client.requestUris ?? [])],
        requireSignedRequestObject: client.requireSignedRequestObject ?? false,
        profile: client.profile ?? null,
        authorizationSignedResponseAlg: client.authorizationSignedResponseAlg ?? 'RS256',
        requireSignedAuthorizationResponse: client.requireSignedAuthorizationResponse ?? false,
        userinfoSignedResponseAlg: client.userinfoSignedResponseAlg ?? null,
        // Writing an entry (the seed names it again) enables it.
        disabledAt: null,
        updatedAt: now,
        // A seed entry of a registered client's id adopts it: from now on the file owns it.
        registeredAt: null,
        registrationAccessTokenHash: null,
        registrationMetadata: null,
      };
      await tx.insert(clients).values(row).onConflictDoUpdate({ target: clients.clientId, set: row });
    }
    for (const resource of records.resources ?? []) {
      const row = {
        ...resource,
        scopes: [...resource.scopes],
        claims: [...resource.claims],
        disabledAt: null,
        updatedAt: now,
      };
      await tx.insert(resources).values(row).onConflictDoUpdate({ target: resources.id, set: row });
    }
    await upsertSeedUsers(tx, records.users ?? [], now);
  });
}

// ─── Registry snapshot ───────────────────────────────────────────────────────────────────────────

interface Registry {
  clients: Map<string, Client>;
  resources: Map<string, Resource>;
}

export function createRegistrySnapshot(db: AppDatabase, ttlMs: number, nowMs: () => number) {
  let loading: Promise<Registry> | undefined;
  let loadedAt = 0;
  let generation = 0;

  const load = async (): Promise<Registry> => {
    // Disabled entries (`disabled_at`, see registry-status.ts) are not part of the registry.
    const [clientRows, resourceRows] = await Promise.all([
      db.select().from(clients).where(isNull(clients.disabledAt)),
      db.select().from(resources).where(isNull(resources.disabledAt)),
    ]);
    return {
      clients: new Map(clientRows.map((row) => [row.clientId, clientFromRow(row)])),
      resources: new Map(resourceRows.map((row) => [row.id, resourceFromRow(row)])),
    };
  };

  return {
    get(): Promise<Registry> {
      if (!loading || nowMs() - loadedAt > ttlMs) {
        const started = ++generation;
        loadedAt = nowMs();
        loading = load();
        // A failed load (database down) must not be cached: the next request retries.
        loading.catch(() => {
          if (generation === started) loading = undefined;
        });
      }
      return loading;
    },
    invalidate() {
      generation++;
      loading = undefined;
    },
  };
}

export function clientFromRow(row: typeof clients.$inferSelect): Client {
  return {
    clientId: row.clientId,
    clientName: row.clientName,
    secretHash: row.secretHash,
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    // The seed loader only writes grant types from GRANT_TYPES (password/implicit are rejected there).
    grantTypes: row.grantTypes as GrantType[],
    scopes: row.scopes,
    skipConsent: row.skipConsent,
    idTokenSigningAlg: row.idTokenSigningAlg as SigningAlg,
    allowedCorsOrigins: row.allowedCorsOrigins,
    backchannelLogoutUri: row.backchannelLogoutUri,
    frontchannelLogoutUri: row.frontchannelLogoutUri,
    refreshTokensWithoutOfflineAccess: row.refreshTokensWithoutOfflineAccess,
    refreshTokenAbsoluteTtl: row.refreshTokenAbsoluteTtl,
    refreshTokenSlidingTtl: row.refreshTokenSlidingTtl,
    dpopBoundAccessTokens: row.dpopBoundAccessTokens,
    dpopNonceRequired: row.dpopNonceRequired,
    requirePushedAuthorizationRequests: row.requirePushedAuthorizationRequests,
    tokenExchange:
      row.tokenExchange === null
        ? null
        : {
            audiences: row.tokenExchange.audiences,
            scopes: row.tokenExchange.scopes,
            // The seed loader only writes RFC 8693 token type URIs.
            subjectTokenTypes: row.tokenExchange.subjectTokenTypes as TokenTypeUri[],
          },
    keepOfflineAccessOnLogout: row.keepOfflineAccessOnLogout,
    requireMfa: row.requireMfa,
    refreshTokenReuseInterval: row.refreshTokenReuseInterval,
    // The seed loader only writes ClientAuthenticationMethod values and the `fapi2` profile.
    authMethods: row.authMethods as ClientAuthenticationMethod[],
    jwks: row.jwks,
    jwksUri: row.jwksUri,
    requestUris: row.requestUris,
    requireSignedRequestObject: row.requireSignedRequestObject,
    profile: row.profile === 'fapi2' ? 'fapi2' : null,
    // The seed loader only writes SigningAlg values.
    authorizationSignedResponseAlg: row.authorizationSignedResponseAlg as SigningAlg,
    userinfoSignedResponseAlg: row.userinfoSignedResponseAlg as SigningAlg | null,
    requireSignedAuthorizationResponse: row.requireSignedAuthorizationResponse,
    ...(row.registeredAt === null ? {} : { dynamicallyRegistered: true }),
  };
}

function tokenExchangeRow(policy: TokenExchangePolicy | null | undefined) {
  if (policy === null || policy === undefined) return null;
  return {
    audiences: [...policy.audiences],
    scopes: [...policy.scopes],
    subjectTokenTypes: [...policy.subjectTokenTypes],
  };
}

export function resourceFromRow(row: typeof resources.$inferSelect): Resource {
  return {
    id: row.id,
    scopes: row.scopes,
    accessTokenFormat: row.accessTokenFormat === 'opaque' ? 'opaque' : 'jwt',
    accessTokenTtl: row.accessTokenTtl,
    accessTokenSigningAlg: row.accessTokenSigningAlg as SigningAlg,
    secretHash: row.secretHash,
    claims: row.claims,
    requireMfa: row.requireMfa,
  };
}
