import { and, eq, like, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { externalIdentities, identityProviders } from '../../db/schema.js';
import { createDrizzleAccountStore } from '../drizzle-account-store.js';

export interface LinkedIdentity {
  providerId: string;
  displayName: string;
  subject: string;
  createdAt: number;
  lastSignInAt: number | null;
}

/** The upstream providers linked to a user (account page), oldest first. */
export async function listLinkedIdentities(db: AppDatabase, sub: string): Promise<LinkedIdentity[]> {
  const rows = await db
    .select({
      source: externalIdentities.source,
      subject: externalIdentities.subject,
      createdAt: externalIdentities.createdAt,
      lastSignInAt: externalIdentities.lastSignInAt,
      displayName: identityProviders.displayName,
    })
    .from(externalIdentities)
    .leftJoin(identityProviders, eq(identityProviders.id, sqlProviderId()))
    .where(and(eq(externalIdentities.sub, sub), like(externalIdentities.source, 'idp:%')))
    .orderBy(externalIdentities.createdAt);
  return rows.map((row) => {
    const providerId = row.source.slice('idp:'.length);
    return {
      providerId,
      displayName: row.displayName ?? providerId,
      subject: row.subject,
      createdAt: row.createdAt,
      lastSignInAt: row.lastSignInAt,
    };
  });
}

/** `idp:<id>` → `<id>`, in SQL, to join the provider's display name. */
function sqlProviderId() {
  return sql<string>`substr(${externalIdentities.source}, 5)`;
}

export type UnlinkOutcome = 'unlinked' | 'last_way_in' | 'unknown';

/**
 * Removes one linked provider, unless it is the user's last way in: a user the federation created
 * has no password, so their last linked provider stays (they would be locked out otherwise). The
 * account store (src/accounts/) makes the change.
 */
export function unlinkIdentity(db: AppDatabase, sub: string, providerId: string): Promise<UnlinkOutcome> {
  return createDrizzleAccountStore(db).unlinkIdentity(sub, `idp:${providerId}`);
}
