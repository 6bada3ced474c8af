import { and, count, desc, eq, gt, gte, ilike, isNull, like, max, or, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { clients, grants, rateLimitCounters, signingKeys, ssoSessions, users } from '../db/schema.js';
import { LOGIN_COUNTER_PREFIX } from '../http/database-rate-limit-store.js';

/**
 * What the operator console reads, straight from the tables every instance shares: HTTP-free, so
 * the pages stay templates and an admin API can read the same. Every list is paged in SQL (an
 * index answers it); nothing here loads a whole table.
 */

export const PAGE_SIZE = 25;

/** A page of a list: `page` counts from 1. */
export interface Paged<T> {
  rows: T[];
  page: number;
  total: number;
  pageSize: number;
}

const offsetOf = (page: number) => (Math.max(1, page) - 1) * PAGE_SIZE;

/** `%text%` for ILIKE with the pattern characters taken literally. */
const containing = (text: string) => `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;

export interface UserRow {
  sub: string;
  username: string;
  name: string | null;
  email: string | null;
  source: 'seed' | 'operator' | 'directory' | 'federation';
  disabled: boolean;
}

const userColumns = {
  sub: users.sub,
  username: users.username,
  name: users.name,
  email: users.email,
  source: users.managedBy,
  disabledAt: users.disabledAt,
};

const toUserRow = <Row extends { disabledAt: number | null }>({ disabledAt, ...row }: Row) => ({
  ...row,
  disabled: disabledAt !== null,
});

/** Users whose username, name, email or sub contains `query` (any case), by username. */
export async function searchUsers(db: AppDatabase, query: string, page: number): Promise<Paged<UserRow>> {
  const pattern = containing(query.trim());
  const where =
    query.trim() === ''
      ? undefined
      : or(
          ilike(users.username, pattern),
          ilike(users.name, pattern),
          ilike(users.email, pattern),
          ilike(users.sub, pattern),
        );
  const [rows, [total]] = await Promise.all([
    db
      .select(userColumns)
      .from(users)
      .where(where)
      .orderBy(users.username)
      .limit(PAGE_SIZE)
      .offset(offsetOf(page)),
    db.select({ value: count() }).from(users).where(where),
  ]);
  return { rows: rows.map(toUserRow), page, total: total?.value ?? 0, pageSize: PAGE_SIZE };
}

export interface UserDetail extends UserRow {
  emailVerified: boolean;
  mfaRequired: boolean;
  groups: readonly string[];
}

export async function findUserDetail(db: AppDatabase, sub: string): Promise<UserDetail | null> {
  const [row] = await db
    .select({
      ...userColumns,
      emailVerified: users.emailVerified,
      mfaRequired: users.mfaRequired,
      groups: users.groups,
    })
    .from(users)
    .where(eq(users.sub, sub));
  if (row === undefined) return null;
  const { groups, ...rest } = row;
  return { ...toUserRow(rest), groups: groups ?? [] };
}

export interface SessionRow {
  id: string;
  sub: string;
  username: string | null;
  methods: readonly string[];
  ip: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  expiresAt: number;
}

const sessionColumns = {
  id: ssoSessions.id,
  sub: ssoSessions.sub,
  username: users.username,
  methods: ssoSessions.methods,
  ip: ssoSessions.ip,
  createdAt: ssoSessions.createdAt,
  lastUsedAt: ssoSessions.lastUsedAt,
  expiresAt: ssoSessions.expiresAt,
};

const toSessionRow = (row: { methods: ReadonlyArray<{ method: string }> }): { methods: string[] } => ({
  ...row,
  methods: row.methods.map((entry) => entry.method),
});

/** Live SSO sessions, newest first; of one user when `sub` is given. */
export async function listSessions(
  db: AppDatabase,
  nowSeconds: number,
  page: number,
  sub?: string,
): Promise<Paged<SessionRow>> {
  const where = and(
    gt(ssoSessions.expiresAt, nowSeconds),
    sub === undefined ? undefined : eq(ssoSessions.sub, sub),
  );
  const [rows, [total]] = await Promise.all([
    db
      .select(sessionColumns)
      .from(ssoSessions)
      .leftJoin(users, eq(users.sub, ssoSessions.sub))
      .where(where)
      .orderBy(desc(ssoSessions.createdAt))
      .limit(PAGE_SIZE)
      .offset(offsetOf(page)),
    db.select({ value: count() }).from(ssoSessions).where(where),
  ]);
  return {
    rows: rows.map((row) => ({ ...row, ...toSessionRow(row) })),
    page,
    total: total?.value ?? 0,
    pageSize: PAGE_SIZE,
  };
}

export interface ClientRow {
  clientId: string;
  clientName: string;
  /** `seed`: the seed file's; `registered`: registered itself (RFC 7591). */
  source: 'seed' | 'registered';
  disabled: boolean;
  activeGrants: number;
  /** When the client last got a grant (a sign-in or token request that started one). */
  lastUsedAt: number | null;
}

export interface ClientDetail extends ClientRow {
  redirectUris: readonly string[];
  postLogoutRedirectUris: readonly string[];
  grantTypes: readonly string[];
  scopes: readonly string[];
  skipConsent: boolean;
  requireMfa: boolean;
  backchannelLogoutUri: string | null;
  authMethods: readonly string[];
}

/** Grants per client: how many are live, and the newest. One grouped query, not one per client. */
async function grantCounts(db: AppDatabase, clientId?: string) {
  const rows = await db
    .select({
      clientId: grants.clientId,
      active: sql<number>`count(*) filter (where ${grants.revokedAt} is null)`.mapWith(Number),
      lastUsedAt: max(grants.createdAt),
    })
    .from(grants)
    .where(clientId === undefined ? undefined : eq(grants.clientId, clientId))
    .groupBy(grants.clientId);
  return new Map(rows.map((row) => [row.clientId, row]));
}

const clientRowOf = (
  row: { clientId: string; clientName: string; registeredAt: number | null; disabledAt: number | null },
  counts: Map<string, { active: number; lastUsedAt: number | null }>,
): ClientRow => ({
  clientId: row.clientId,
  clientName: row.clientName,
  source: row.registeredAt === null ? 'seed' : 'registered',
  disabled: row.disabledAt !== null,
  activeGrants: counts.get(row.clientId)?.active ?? 0,
  lastUsedAt: counts.get(row.clientId)?.lastUsedAt ?? null,
});

export async function listClients(db: AppDatabase): Promise<ClientRow[]> {
  const [rows, counts] = await Promise.all([
    db
      .select({
        clientId: clients.clientId,
        clientName: clients.clientName,
        registeredAt: clients.registeredAt,
        disabledAt: clients.disabledAt,
      })
      .from(clients)
      .orderBy(clients.clientId),
    grantCounts(db),
  ]);
  return rows.map((row) => clientRowOf(row, counts));
}

export async function findClientDetail(db: AppDatabase, clientId: string): Promise<ClientDetail | null> {
  const [[row], counts] = await Promise.all([
    db.select().from(clients).where(eq(clients.clientId, clientId)),
    grantCounts(db, clientId),
  ]);
  if (row === undefined) return null;
  return {
    ...clientRowOf(row, counts),
    redirectUris: row.redirectUris,
    postLogoutRedirectUris: row.postLogoutRedirectUris,
    grantTypes: row.grantTypes,
    scopes: row.scopes,
    skipConsent: row.skipConsent,
    requireMfa: row.requireMfa,
    backchannelLogoutUri: row.backchannelLogoutUri,
    authMethods: row.authMethods,
  };
}

export type KeyStatus = 'next' | 'signing' | 'retiring' | 'retired';

export interface KeyRow {
  kid: string;
  alg: string;
  status: KeyStatus;
  createdAt: number;
  activatesAt: number;
  retiresAt: number | null;
  removeAfter: number | null;
}

/** Where a key is in its life (src/keys/rotation.ts): published before it signs, after it stops. */
export function keyStatusOf(key: Pick<KeyRow, 'activatesAt' | 'retiresAt'>, nowSeconds: number): KeyStatus {
  if (key.activatesAt > nowSeconds) return 'next';
  if (key.retiresAt === null) return 'signing';
  return key.retiresAt > nowSeconds ? 'retiring' : 'retired';
}

export async function listKeys(db: AppDatabase, nowSeconds: number): Promise<KeyRow[]> {
  const rows = await db
    .select({
      kid: signingKeys.kid,
      alg: signingKeys.alg,
      createdAt: signingKeys.createdAt,
      activatesAt: signingKeys.activatesAt,
      retiresAt: signingKeys.retiresAt,
      removeAfter: signingKeys.removeAfter,
    })
    .from(signingKeys)
    .orderBy(desc(signingKeys.createdAt), signingKeys.alg);
  return rows.map((row) => ({ ...row, status: keyStatusOf(row, nowSeconds) }));
}

export interface Overview {
  /** SSO sessions started in each of the last 12 hours, oldest first (`hour`: its start, epoch seconds). */
  signInsPerHour: Array<{ hour: number; count: number }>;
  /** Failed password sign-ins counted in the current lockout windows (per username). */
  failures: number;
  /** Usernames and accounts locked out now (their failures reached the limit). */
  lockouts: number;
  activeSessions: number;
  /** Seconds since the signing key in use began to sign; null when there is none yet. */
  keyAgeSeconds: number | null;
  users: number;
  disabledUsers: number;
}

const HOURS_SHOWN = 12;

/** The overview's numbers: a handful of aggregate queries, each answered from an index. */
export async function readOverview(
  db: AppDatabase,
  nowSeconds: number,
  lockout: { maxFailuresPerUsername: number; windowSeconds: number },
): Promise<Overview> {
  const firstHour = Math.floor(nowSeconds / 3600) * 3600 - (HOURS_SHOWN - 1) * 3600;
  const windowStart = (nowSeconds - lockout.windowSeconds) * 1000;
  const accountCounters = or(
    like(rateLimitCounters.key, `${LOGIN_COUNTER_PREFIX}username:%`),
    like(rateLimitCounters.key, `${LOGIN_COUNTER_PREFIX}account:%`),
  );
  const [perHour, [failures], [sessions], keys, [userCounts]] = await Promise.all([
    db
      .select({
        hour: sql<number>`(${ssoSessions.createdAt} / 3600) * 3600`.mapWith(Number),
        count: count(),
      })
      .from(ssoSessions)
      .where(gte(ssoSessions.createdAt, firstHour))
      .groupBy(sql`1`),
    db
      .select({
        failures:
          sql<number>`coalesce(sum(${rateLimitCounters.hits}) filter (where ${rateLimitCounters.key} like ${`${LOGIN_COUNTER_PREFIX}username:%`}), 0)`.mapWith(
            Number,
          ),
        lockouts:
          sql<number>`count(*) filter (where ${rateLimitCounters.hits} >= ${lockout.maxFailuresPerUsername})`.mapWith(
            Number,
          ),
      })
      .from(rateLimitCounters)
      .where(and(accountCounters, gte(rateLimitCounters.windowStartedAt, windowStart))),
    db.select({ value: count() }).from(ssoSessions).where(gt(ssoSessions.expiresAt, nowSeconds)),
    listKeys(db, nowSeconds),
    db
      .select({
        total: count(),
        disabled: sql<number>`count(*) filter (where ${users.disabledAt} is not null)`.mapWith(Number),
      })
      .from(users),
  ]);
  const counts = new Map(perHour.map((row) => [row.hour, row.count]));
  const signing = keys.filter((key) => key.status === 'signing').map((key) => key.activatesAt);
  return {
    signInsPerHour: Array.from({ length: HOURS_SHOWN }, (_, index) => {
      const hour = firstHour + index * 3600;
      return { hour, count: counts.get(hour) ?? 0 };
    }),
    failures: failures?.failures ?? 0,
    lockouts: failures?.lockouts ?? 0,
    activeSessions: sessions?.value ?? 0,
    keyAgeSeconds: signing.length === 0 ? null : nowSeconds - Math.max(...signing),
    users: userCounts?.total ?? 0,
    disabledUsers: userCounts?.disabled ?? 0,
  };
}

/** Whether a user has no live grant left (after "end sessions"): for the page's notice. */
export async function activeGrantCount(db: AppDatabase, sub: string): Promise<number> {
  const [row] = await db
    .select({ value: count() })
    .from(grants)
    .where(and(eq(grants.sub, sub), isNull(grants.revokedAt)));
  return row?.value ?? 0;
}
