import { and, count, desc, eq, gt, gte, inArray, like, or, sql } from 'drizzle-orm';
import { AUDIT_EVENTS } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { auditEvents, rateLimitCounters, ssoSessions, users } from '../db/schema.js';
import { LOGIN_COUNTER_PREFIX } from '../http/database-rate-limit-store.js';

/**
 * What the operator console reads beyond the admin operations (src/plugins/admin.ts): the
 * overview's aggregates and the list of every live session, straight from the tables every
 * instance shares. HTTP-free; every list is paged in SQL and every count answered from an index.
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

export interface Overview {
  /** Sign-ins and failed sign-ins in each of the last 12 hours, oldest first (`hour`: its start). */
  perHour: HourCounts[];
  /** Usernames and accounts locked out now (their failures reached the limit in the current window). */
  lockouts: number;
  activeSessions: number;
  users: number;
  disabledUsers: number;
}

const HOURS_SHOWN = 12;

/** The audit events the overview counts per hour (src/audit.ts). */
const SIGN_IN_EVENTS = { signIns: AUDIT_EVENTS.loginSucceeded, failures: AUDIT_EVENTS.loginFailed } as const;

export interface HourCounts {
  hour: number;
  signIns: number;
  failures: number;
}

/** An hour is closed once it ended this long ago: the batched audit writer has stored its events. */
const HOUR_SETTLED_SECONDS = 120;

/** Counts per hour of the sign-in events from `fromHour` (an hour's start) on, one grouped query. */
async function countEventsPerHour(db: AppDatabase, fromHour: number): Promise<Map<number, HourCounts>> {
  const rows = await db
    .select({
      hour: sql<number>`(${auditEvents.time} / 3600) * 3600`.mapWith(Number),
      event: auditEvents.event,
      count: count(),
    })
    .from(auditEvents)
    .where(and(inArray(auditEvents.event, Object.values(SIGN_IN_EVENTS)), gte(auditEvents.time, fromHour)))
    .groupBy(sql`1`, auditEvents.event);
  const counts = new Map<number, HourCounts>();
  for (const row of rows) {
    const entry = counts.get(row.hour) ?? { hour: row.hour, signIns: 0, failures: 0 };
    if (row.event === SIGN_IN_EVENTS.signIns) entry.signIns = row.count;
    else entry.failures = row.count;
    counts.set(row.hour, entry);
  }
  return counts;
}

/**
 * Sign-ins and failures per hour from the stored audit events, read through the (event, time)
 * index. A closed hour never changes, so its counts are kept (per instance) and only the hours
 * not yet counted are read again: the overview's cost follows the events of the current hour, not
 * the millions kept.
 */
export function createHourlySignInCounts(db: AppDatabase) {
  const closed = new Map<number, HourCounts>();
  return async function perHour(nowSeconds: number): Promise<HourCounts[]> {
    const firstHour = Math.floor(nowSeconds / 3600) * 3600 - (HOURS_SHOWN - 1) * 3600;
    const hours = Array.from({ length: HOURS_SHOWN }, (_, index) => firstHour + index * 3600);
    for (const hour of closed.keys()) if (hour < firstHour) closed.delete(hour);
    const firstOpen = hours.find((hour) => !closed.has(hour)) ?? hours[hours.length - 1] ?? firstHour;
    const counted = await countEventsPerHour(db, firstOpen);
    return hours.map((hour) => {
      const known = closed.get(hour);
      if (known !== undefined) return known;
      const counts = counted.get(hour) ?? { hour, signIns: 0, failures: 0 };
      if (hour + 3600 + HOUR_SETTLED_SECONDS <= nowSeconds) closed.set(hour, counts);
      return counts;
    });
  };
}

export type HourlySignInCounts = ReturnType<typeof createHourlySignInCounts>;

/** Login counters (per username or account) at the limit in their current window: locked out now. */
async function lockoutsNow(db: AppDatabase, nowSeconds: number, lockout: LockoutSettings) {
  const [row] = await db
    .select({ value: count() })
    .from(rateLimitCounters)
    .where(
      and(
        or(
          like(rateLimitCounters.key, `${LOGIN_COUNTER_PREFIX}username:%`),
          like(rateLimitCounters.key, `${LOGIN_COUNTER_PREFIX}account:%`),
        ),
        gte(rateLimitCounters.windowStartedAt, (nowSeconds - lockout.windowSeconds) * 1000),
        gte(rateLimitCounters.hits, lockout.maxFailuresPerUsername),
      ),
    );
  return row?.value ?? 0;
}

export interface LockoutSettings {
  maxFailuresPerUsername: number;
  windowSeconds: number;
}

/** The overview's numbers: a handful of aggregate queries, each answered from an index. */
export async function readOverview(
  db: AppDatabase,
  nowSeconds: number,
  lockout: LockoutSettings,
  hourly: HourlySignInCounts,
): Promise<Overview> {
  const [perHour, lockouts, [sessions], [userCounts]] = await Promise.all([
    hourly(nowSeconds),
    lockoutsNow(db, nowSeconds, lockout),
    db.select({ value: count() }).from(ssoSessions).where(gt(ssoSessions.expiresAt, nowSeconds)),
    db
      .select({
        total: count(),
        disabled: sql<number>`count(*) filter (where ${users.disabledAt} is not null)`.mapWith(Number),
      })
      .from(users),
  ]);
  return {
    perHour,
    lockouts,
    activeSessions: sessions?.value ?? 0,
    users: userCounts?.total ?? 0,
    disabledUsers: userCounts?.disabled ?? 0,
  };
}
