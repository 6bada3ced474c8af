import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { interactions } from '../db/schema.js';
import { lazy } from '../storage/drizzle/prepared-statements.js';

/** The /authorize parameters exactly as received, so every step can re-validate them with oauth-core. */
export interface StoredAuthorizationRequest {
  params: Record<string, string>;
  /** RFC 8707 `resource` values (the one parameter that may repeat). */
  resources: string[];
  /** Set when the parameters came from a pushed request (RFC 9126): the code spends it. */
  pushedRequestUriHash?: string;
}

/**
 * An authorization request waiting for the user (see README "Interaction lifecycle"), or a device
 * authorization being approved on the verification page (README "Device flow").
 */
export interface Interaction {
  id: string;
  /** Hash of the browser-binding cookie of the browser that started the request. */
  browserHash: string;
  request: StoredAuthorizationRequest;
  /** The SSO session created by a login inside this interaction, if any. */
  loginSid: string | null;
  /** Scopes approved on the consent page inside this interaction, if any. */
  approvedScopes: string[] | null;
  /**
   * RFC 8628: the hash of the device code this interaction approves or denies; `request` is empty
   * then. Absent or `null` for an /authorize interaction.
   */
  deviceCodeHash?: string | null;
  createdAt: number;
  expiresAt: number;
}

export interface InteractionRepository {
  create(interaction: Interaction): Promise<void>;
  /** The interaction, or `null` when unknown or expired at `now`. */
  findActive(id: string, now: number): Promise<Interaction | null>;
  recordLogin(id: string, sid: string): Promise<void>;
  recordApproval(id: string, scopes: readonly string[]): Promise<void>;
  /**
   * Deletes the interaction if it is still there, unexpired and bound to `browserHash`, and returns
   * it: a single conditional `DELETE … RETURNING`, so of two concurrent submissions (double click,
   * two instances) exactly one goes on to issue a code.
   */
  consume(id: string, browserHash: string, now: number): Promise<Interaction | null>;
  deleteExpired(now: number): Promise<void>;
}

export function createInteractionRepository(db: AppDatabase): InteractionRepository {
  // Every page of a sign-in reads its interaction: prepared, planned once per connection.
  const findActive = lazy(() =>
    db
      .select()
      .from(interactions)
      .where(
        and(eq(interactions.id, sql.placeholder('id')), gt(interactions.expiresAt, sql.placeholder('now'))),
      )
      .limit(1)
      .prepare('auth_find_active_interaction'),
  );
  return {
    async create(interaction) {
      await db.insert(interactions).values(interaction);
    },
    async findActive(id, now) {
      const rows = await findActive().execute({ id, now });
      return interactionFromRow(rows[0]);
    },
    async recordLogin(id, sid) {
      await db.update(interactions).set({ loginSid: sid }).where(eq(interactions.id, id));
    },
    async recordApproval(id, scopes) {
      await db
        .update(interactions)
        .set({ approvedScopes: [...scopes] })
        .where(eq(interactions.id, id));
    },
    async consume(id, browserHash, now) {
      const rows = await db
        .delete(interactions)
        .where(
          and(
            eq(interactions.id, id),
            eq(interactions.browserHash, browserHash),
            gt(interactions.expiresAt, now),
          ),
        )
        .returning();
      return interactionFromRow(rows[0]);
    },
    async deleteExpired(now) {
      await db.delete(interactions).where(lte(interactions.expiresAt, now));
    },
  };
}

/** An /authorize interaction has no `deviceCodeHash` member at all (the record as it was before devices). */
function interactionFromRow(row: typeof interactions.$inferSelect | undefined): Interaction | null {
  if (row === undefined) return null;
  const { deviceCodeHash, ...interaction } = row;
  return deviceCodeHash === null ? interaction : { ...interaction, deviceCodeHash };
}
