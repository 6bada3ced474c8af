import { and, eq, gt, lte, sql } from 'drizzle-orm';
import type { SignInSubject } from '../accounts/account-store.js';
import { signInSubjectFromRow, signInSubjectJoin } from '../accounts/drizzle/sign-in-subject.js';
import type { AppDatabase } from '../db/client.js';
import { consents, interactions, ssoSessions } from '../db/schema.js';
import { lazy } from '../storage/drizzle/prepared-statements.js';
import { consentUnion } from './consent-union.js';
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

/**
 * The sign-in subject (`AuthorizationFlowDeps.signInSubject`) of `sub` for `clientId`, read with
 * the interaction; `subject` is `null` when the account is gone or disabled.
 */
export interface JoinedSignInSubject {
  sub: string;
  clientId: string;
  subject: SignInSubject | null;
}

/** What the user approved on the consent page, remembered for the client. */
export interface ConsentApproval {
  sub: string;
  clientId: string;
  scopes: readonly string[];
}

/** What the interaction pages' guard reads in one statement. */
export interface ActiveInteraction {
  interaction: Interaction;
  session: SsoSession | null;
  /**
   * With a live session and a stored request naming its `client_id`: the session's account, its
   * second factors and its consent for that client, which the step decides on next.
   */
  joinedSubject: JoinedSignInSubject | null;
}

export interface InteractionRepository {
  create(interaction: Interaction): Promise<void>;
  /**
   * The interaction, or `null` when unknown or expired at `now`; and, read in the same statement,
   * the SSO session whose cookie key hashes to `sessionKeyHash` if it is live at `now` (`null`
   * without a cookie) with its sign-in subject: every page of a sign-in after the login needs
   * them all.
   */
  findActiveWithSession(
    id: string,
    sessionKeyHash: string | null,
    now: number,
  ): Promise<ActiveInteraction | null>;
  /**
   * Deletes the interaction if it is still there, unexpired and bound to `browserHash`, and returns
   * it: a single conditional `DELETE … RETURNING`, so of two concurrent submissions (double click,
   * two instances) exactly one goes on to issue a code. With `approval` (the consent page's Allow),
   * the same statement adds its scopes to the user's consent for the client
   * (the union of `consentUnion`), only when it consumed the interaction.
   */
  consume(
    id: string,
    browserHash: string,
    now: number,
    approval?: ConsentApproval,
  ): Promise<Interaction | null>;
  deleteExpired(now: number): Promise<void>;
}

/** `delete from interactions where` the interaction is live and this browser's (`consume`). */
function consumeLive(db: AppDatabase) {
  const p = (name: string) => sql.placeholder(name);
  return db
    .delete(interactions)
    .where(
      and(
        eq(interactions.id, p('id')),
        eq(interactions.browserHash, p('browserHash')),
        gt(interactions.expiresAt, p('now')),
      ),
    );
}

/** The stored /authorize request's `client_id` (none for a device approval's empty request). */
const storedClientId = sql<string | null>`(${interactions.request} #>> '{params,client_id}')`;

/** The account of the joined session, for the stored request's client. */
const subjectOfSession = signInSubjectJoin(ssoSessions.sub, storedClientId);

export function createInteractionRepository(db: AppDatabase): InteractionRepository {
  const p = (name: string) => sql.placeholder(name);
  // A sign-in's statements on its interaction (create, one read per page, the end; the login is
  // recorded by the session's own statement), prepared: built once, parsed and planned once per connection.
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
        .select({
          interaction: interactions,
          session: ssoSessionColumns,
          requestClientId: storedClientId,
          ...subjectOfSession.columns,
        })
        .from(interactions)
        .leftJoin(
          ssoSessions,
          and(eq(ssoSessions.keyHash, p('sessionKeyHash')), gt(ssoSessions.expiresAt, p('now'))),
        )
        .leftJoin(subjectOfSession.table, subjectOfSession.on)
        .where(and(eq(interactions.id, p('id')), gt(interactions.expiresAt, p('now'))))
        .limit(1)
        .prepare('auth_find_active_interaction_with_session'),
    ),
    consume: lazy(() => consumeLive(db).returning().prepare('auth_consume_interaction')),
    consumeApproving: lazy(() => {
      // `with consumed as (delete … returning …), remembered as (insert into consents select … from
      // consumed on conflict …) select * from consumed`: the consent is written only when the
      // interaction was there to consume, in the same statement (one commit).
      const consumed = db.$with('consumed').as(consumeLive(db).returning());
      const remembered = db.$with('remembered').as(
        db
          .insert(consents)
          .select(
            sql`select ${p('sub')}::text, ${p('clientId')}::text, ${p('scopes')}::text[], ${p('now')}::bigint, ${p('now')}::bigint from ${sql.identifier('consumed')}`,
          )
          .onConflictDoUpdate(consentUnion),
      );
      return db
        .with(consumed, remembered)
        .select()
        .from(consumed)
        .prepare('auth_consume_interaction_approving');
    }),
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
      if (row === undefined) return null;
      const { interaction, session, requestClientId, user, ...subjectColumns } = row;
      const joinedSubject =
        session !== null && requestClientId !== null
          ? {
              sub: session.sub,
              clientId: requestClientId,
              subject: user === null ? null : signInSubjectFromRow(user, subjectColumns),
            }
          : null;
      return {
        interaction: interactionFromRow(interaction),
        session: session ? ssoSessionFromRow(session) : null,
        joinedSubject,
      };
    },
    async consume(id, browserHash, now, approval) {
      const rows =
        approval === undefined
          ? await statements.consume().execute({ id, browserHash, now })
          : await statements.consumeApproving().execute({
              id,
              browserHash,
              now,
              sub: approval.sub,
              clientId: approval.clientId,
              scopes: [...approval.scopes],
            });
      return interactionFromRow(rows[0]);
    },
    async deleteExpired(now) {
      await db.delete(interactions).where(lte(interactions.expiresAt, now));
    },
  };
}

/** An /authorize interaction has no `deviceCodeHash` member at all (the record as it was before devices). */
function interactionFromRow(row: typeof interactions.$inferSelect): Interaction;
function interactionFromRow(row: typeof interactions.$inferSelect | undefined): Interaction | null;
function interactionFromRow(row: typeof interactions.$inferSelect | undefined): Interaction | null {
  if (row === undefined) return null;
  const { deviceCodeHash, ...interaction } = row;
  return deviceCodeHash === null ? interaction : { ...interaction, deviceCodeHash };
}
