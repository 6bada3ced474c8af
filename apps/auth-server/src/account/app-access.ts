import type { Clock, ProtocolStores } from '@oidc-orders/oauth-core';
import { and, eq, gt, isNull } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { consents, grants, refreshTokens } from '../db/schema.js';

/** An application the user gave access to: a remembered consent, live refresh tokens, or both. */
export interface AppAccess {
  clientId: string;
  clientName: string;
  scopes: string[];
  /** The app holds a live refresh token (it can act while the user is away). */
  offline: boolean;
}

/**
 * "Apps with access" on the account page: what the consent page promised can be taken back.
 * Revoking forgets the consent (the next sign-in asks again) and revokes every grant of the user
 * for that client, which ends its refresh and opaque access tokens (the store's `revokeGrant`).
 */
export function createAppAccess(deps: { db: AppDatabase; stores: ProtocolStores; clock: Clock }) {
  const { db, stores, clock } = deps;

  async function liveGrants(sub: string, clientId?: string) {
    return db
      .selectDistinct({ id: grants.id, clientId: grants.clientId, scopes: grants.scopes })
      .from(grants)
      .innerJoin(refreshTokens, eq(refreshTokens.grantId, grants.id))
      .where(
        and(
          eq(grants.sub, sub),
          isNull(grants.revokedAt),
          isNull(refreshTokens.revokedAt),
          isNull(refreshTokens.usedAt),
          gt(refreshTokens.expiresAt, clock.nowSeconds()),
          ...(clientId === undefined ? [] : [eq(grants.clientId, clientId)]),
        ),
      );
  }

  return {
    async list(sub: string): Promise<AppAccess[]> {
      const byClient = new Map<string, { scopes: Set<string>; offline: boolean }>();
      const entry = (clientId: string) => {
        const existing = byClient.get(clientId);
        if (existing) return existing;
        const created = { scopes: new Set<string>(), offline: false };
        byClient.set(clientId, created);
        return created;
      };
      for (const row of await db.select().from(consents).where(eq(consents.sub, sub))) {
        for (const scope of row.scopes) entry(row.clientId).scopes.add(scope);
      }
      for (const grant of await liveGrants(sub)) {
        const found = entry(grant.clientId);
        found.offline = true;
        for (const scope of grant.scopes) found.scopes.add(scope);
      }
      const apps: AppAccess[] = [];
      for (const [clientId, found] of [...byClient].sort(([a], [b]) => a.localeCompare(b))) {
        const client = await stores.clients.findClient(clientId);
        apps.push({
          clientId,
          clientName: client?.clientName ?? clientId,
          scopes: [...found.scopes].sort(),
          offline: found.offline,
        });
      }
      return apps;
    },

    /** Forgets the consent and revokes the user's grants for the client; returns the grants revoked. */
    async revoke(sub: string, clientId: string): Promise<number> {
      await db.delete(consents).where(and(eq(consents.sub, sub), eq(consents.clientId, clientId)));
      const live = await db
        .select({ id: grants.id })
        .from(grants)
        .where(and(eq(grants.sub, sub), eq(grants.clientId, clientId), isNull(grants.revokedAt)));
      for (const grant of live) await stores.grants.revokeGrant(grant.id, clock.nowSeconds());
      return live.length;
    },
  };
}

export type AppAccessRepository = ReturnType<typeof createAppAccess>;
