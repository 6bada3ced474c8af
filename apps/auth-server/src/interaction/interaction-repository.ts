import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { interactions, ssoSessions } from '../db/schema.js';
import { lazy } from '../storage/drizzle/prepared-statements.js';
import { type SsoSession, ssoSessionColumns, ssoSessionFromRow } from './sso-session-repository.js';

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
  /**
   * The interaction, or `null` when unknown or expired at `now`; and, read in the same statement,
   * the SSO session whose cookie key hashes to `sessionKeyHash` if it is live at `now` (`null`
   * without a cookie): every page of a sign-in after the login needs both.
   */
  findActiveWithSession(
    id: string,
    sessionKeyHash: string | null,
    now: number,
  ): Promise<{ interaction: Interaction; session: SsoSession | null } | null>;
  recordLogin(id: string, sid: string): Promise<void>;
  /**
   * Deletes the interaction if it is still there, unexpired and bound to `browserHash`, and returns
   * it: a single conditional `DELETE … RETURNING`, so of two concurrent submissions (double click,
   * two instances) exactly one goes on to issue a code.
   */
  consume(id: string, browserHash: string, now: number): Promise<Interaction | null>;
  deleteExpired(now: number): Promise<void>;
}

export function createInteractionRepository(db: AppDatabase): InteractionRepository {
  const p = (name: string) => sql.placeholder(name);
  // A sign-in's statements on its interaction (create, one read per page, the login, the end),
  // prepared: built once, parsed and planned once per connection.
  const statements = {
    create: lazy(() =>
      db
        .insert(interactions)
        .values({
          id: p('id'),
          browserHash: p('browserHash'),
          request: p('request'),
          loginSid: p('loginSid'),
          // Not through the array column's encoder, which cannot take `null`: the driver sends both.
          approvedScopes: sql`${p('approvedScopes')}`,
          deviceCodeHash: p('deviceCodeHash'),
          createdAt: p('createdAt'),
          expiresAt: p('expiresAt'),
        })
        .prepare('auth_create_interaction'),
    ),
    findActiveWithSession: lazy(() =>
      db
        .select({ interaction: interactions, session: ssoSessionColumns })
        .from(interactions)
        .leftJoin(
          ssoSessions,
          and(eq(ssoSessions.keyHash, p('sessionKeyHash')), gt(ssoSessions.expiresAt, p('now'))),
        )
        .where(and(eq(interactions.id, p('id')), gt(interactions.expiresAt, p('now'))))
        .limit(1)
        .prepare('auth_find_active_interaction_with_session'),
    ),
    recordLogin: lazy(() =>
      db
        .update(interactions)
        .set({ loginSid: sql`${p('sid')}` })
        .where(eq(interactions.id, p('id')))
        .prepare('auth_record_interaction_login'),
    ),
    consume: lazy(() =>
      db
        .delete(interactions)
        .where(
          and(
            eq(interactions.id, p('id')),
            eq(interactions.browserHash, p('browserHash')),
            gt(interactions.expiresAt, p('now')),
          ),
        )
        .returning()
        .prepare('auth_consume_interaction'),
    ),
  };
  return {
    async create(interaction) {
      await statements.create().execute({
        ...interaction,
        approvedScopes: interaction.approvedScopes === null ? null : [...interaction.approvedScopes],
        deviceCodeHash: interaction.deviceCodeHash ?? null,
      });
    },
    async findActiveWithSession(id, sessionKeyHash, now) {
      const [row] = await statements.findActiveWithSession().execute({ id, sessionKeyHash, now });
      const interaction = interactionFromRow(row?.interaction);
      if (interaction === null) return null;
      return { interaction, session: row?.session ? ssoSessionFromRow(row.session) : null };
    },
    async recordLogin(id, sid) {
      await statements.recordLogin().execute({ id, sid });
    },
    async consume(id, browserHash, now) {
      const rows = await statements.consume().execute({ id, browserHash, now });
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
