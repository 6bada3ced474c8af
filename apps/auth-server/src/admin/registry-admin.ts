import { adminApiResource, type Resource } from '@oidc-orders/oauth-core';
import { and, arrayOverlaps, asc, count, isNull, max, sql } from 'drizzle-orm';
import { linkedAccountsOf } from '../accounts/drizzle/operator-reads.js';
import type { AppDatabase } from '../db/client.js';
import { accessTokens, clients, grants, identityProviders, resources } from '../db/schema.js';
import { AdminNotFoundError } from './admin-errors.js';

/**
 * Clients, resources and upstream providers as the operator sees them: read-only, because the seed
 * file is their truth (a change goes through the file and `seed plan`), with what only the running
 * server knows: how many grants are live and when each was last used.
 */

/** Live use of an entry: grants not revoked, and the latest grant or stored access token. */
export interface LiveUse {
  activeGrants: number;
  /** Seconds since the epoch; `null` when never used (JWT access tokens leave no row, grants do). */
  lastUsedAt: number | null;
}

export interface ClientOverview extends LiveUse {
  clientId: string;
  clientName: string;
  /** `seed`: the seed file's; `registered`: registered itself (RFC 7591) or adopted nowhere yet. */
  source: 'seed' | 'registered';
  status: 'enabled' | 'disabled';
  grantTypes: string[];
  scopes: string[];
  redirectUris: string[];
  authMethods: string[];
  backchannelLogoutUri: string | null;
  dpopBoundAccessTokens: boolean;
}

export interface ResourceOverview extends LiveUse {
  id: string;
  scopes: string[];
  accessTokenFormat: 'jwt' | 'opaque';
  accessTokenTtl: number;
  /** `built-in`: the server's own (the administration API); `seed`: the file's. */
  source: 'seed' | 'built-in';
  status: 'enabled' | 'disabled';
}

export interface ProviderOverview {
  id: string;
  issuer: string;
  displayName: string;
  status: 'enabled' | 'disabled';
  /** Local accounts linked to the provider. */
  linkedAccounts: number;
  lastSignInAt: number | null;
}

const statusOf = (disabledAt: number | null) => (disabledAt === null ? 'enabled' : 'disabled');
const latest = (...times: Array<number | null | undefined>) =>
  times.reduce<number | null>(
    (best, time) => (time == null ? best : best === null ? time : Math.max(best, time)),
    null,
  );

export function createRegistryAdmin(deps: { db: AppDatabase; issuer: string }) {
  const { db } = deps;

  /** Per client: live grants and the newest grant; the newest stored access token (client credentials). */
  async function clientUse(): Promise<Map<string, LiveUse>> {
    const grantRows = await db
      .select({
        clientId: grants.clientId,
        active: sql<number>`count(*) filter (where ${grants.revokedAt} is null)`.mapWith(Number),
        newest: max(grants.createdAt),
      })
      .from(grants)
      .groupBy(grants.clientId);
    const tokenRows = await db
      .select({ clientId: accessTokens.clientId, newest: max(accessTokens.issuedAt) })
      .from(accessTokens)
      .groupBy(accessTokens.clientId);
    const use = new Map<string, LiveUse>();
    for (const row of grantRows) use.set(row.clientId, { activeGrants: row.active, lastUsedAt: row.newest });
    for (const row of tokenRows) {
      const known = use.get(row.clientId) ?? { activeGrants: 0, lastUsedAt: null };
      use.set(row.clientId, { ...known, lastUsedAt: latest(known.lastUsedAt, row.newest) });
    }
    return use;
  }

  async function resourceUse(resource: Pick<Resource, 'id' | 'scopes'>): Promise<LiveUse> {
    // A grant reaches a resource when it was bound to it (RFC 8707) or holds one of its scopes.
    const reaches = sql`(${arrayOverlaps(grants.scopes, [...resource.scopes])} or ${resource.id} = any(${grants.resources}))`;
    const [grantRow] = await db
      .select({ active: count(), newest: max(grants.createdAt) })
      .from(grants)
      .where(and(reaches, isNull(grants.revokedAt)));
    const [tokenRow] = await db
      .select({ newest: max(accessTokens.issuedAt) })
      .from(accessTokens)
      .where(sql`${resource.id} = any(${accessTokens.audience})`);
    return {
      activeGrants: grantRow?.active ?? 0,
      lastUsedAt: latest(grantRow?.newest, tokenRow?.newest),
    };
  }

  async function clientList(): Promise<ClientOverview[]> {
    const rows = await db.select().from(clients).orderBy(asc(clients.clientId));
    const use = await clientUse();
    return rows.map((row) => ({
      clientId: row.clientId,
      clientName: row.clientName,
      source: row.registeredAt === null ? 'seed' : 'registered',
      status: statusOf(row.disabledAt),
      grantTypes: [...row.grantTypes],
      scopes: [...row.scopes],
      redirectUris: [...row.redirectUris],
      authMethods: [...row.authMethods],
      backchannelLogoutUri: row.backchannelLogoutUri,
      dpopBoundAccessTokens: row.dpopBoundAccessTokens,
      ...(use.get(row.clientId) ?? { activeGrants: 0, lastUsedAt: null }),
    }));
  }

  return {
    clients: clientList,

    async client(clientId: string): Promise<ClientOverview> {
      const found = (await clientList()).find((entry) => entry.clientId === clientId);
      if (found === undefined) throw new AdminNotFoundError('client', clientId);
      return found;
    },

    async resources(): Promise<ResourceOverview[]> {
      const rows = await db.select().from(resources).orderBy(asc(resources.id));
      const builtIn = adminApiResource(deps.issuer);
      const entries = [
        ...rows.map((row) => ({ ...row, source: 'seed' as const })),
        { ...builtIn, disabledAt: null, source: 'built-in' as const },
      ];
      return Promise.all(
        entries.map(async (entry) => ({
          id: entry.id,
          scopes: [...entry.scopes],
          accessTokenFormat: entry.accessTokenFormat as 'jwt' | 'opaque',
          accessTokenTtl: entry.accessTokenTtl,
          source: entry.source,
          status: statusOf(entry.disabledAt),
          ...(await resourceUse(entry)),
        })),
      );
    },

    async providers(): Promise<ProviderOverview[]> {
      const rows = await db.select().from(identityProviders).orderBy(asc(identityProviders.id));
      return Promise.all(
        rows.map(async (row) => {
          // Linked identities carry the source `idp:<id>` (src/federation/).
          const linked = await linkedAccountsOf(db, `idp:${row.id}`);
          return {
            id: row.id,
            issuer: row.issuer,
            displayName: row.displayName,
            status: statusOf(row.disabledAt),
            linkedAccounts: linked.accounts,
            lastSignInAt: linked.lastSignInAt,
          };
        }),
      );
    },
  };
}

export type RegistryAdmin = ReturnType<typeof createRegistryAdmin>;
