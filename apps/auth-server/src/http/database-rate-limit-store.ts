import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import { and, lt, notLike, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { rateLimitCounters } from '../db/schema.js';

/** Keys of the login counters, which have their own (longer) windows and sweep. */
export const LOGIN_COUNTER_PREFIX = 'login-';

/**
 * A @fastify/rate-limit store on the `rate_limit_counters` table: one fixed window per key, counted
 * by a single upsert, so every instance behind a load balancer shares the same count (the default
 * in-memory store would give each instance its own budget and multiply the limit by their number).
 *
 * The window starts at a key's first hit and restarts on the first hit after it ended; `ttl` (what
 * `Retry-After` is computed from) is the time left in the window.
 */
export function databaseRateLimitStore(
  db: AppDatabase,
  options: { nowMs?: () => number } = {},
): FastifyRateLimitStoreCtor {
  const hit = databaseRateLimitCounter(db, options);

  return class DatabaseRateLimitStore implements FastifyRateLimitStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
      hit(key, timeWindow).then(
        (result) => callback(null, result),
        (error: Error) => callback(error),
      );
    }

    child(): FastifyRateLimitStore {
      return new DatabaseRateLimitStore();
    }
  };
}

/**
 * One more hit on a fixed-window counter in one statement (an upsert that restarts the window once
 * it has ended), so that every instance on the database counts the same hits.
 */
export async function incrementWindowCounter(
  db: AppDatabase,
  key: string,
  now: number,
  windowMs: number,
): Promise<{ hits: number; windowStartedAt: number }> {
  const row = (await incrementWindowCounters(db, [key], now, windowMs)).get(key);
  if (row === undefined) throw new Error('the counter upsert returned no row');
  return row;
}

/**
 * `incrementWindowCounter` for several distinct keys at once: one multi-row upsert, one round
 * trip. Returns each key's count and window start.
 */
export async function incrementWindowCounters(
  db: AppDatabase,
  keys: readonly string[],
  now: number,
  windowMs: number,
): Promise<Map<string, { hits: number; windowStartedAt: number }>> {
  if (keys.length === 0) return new Map();
  const windowEnded = sql`${rateLimitCounters.windowStartedAt} + ${windowMs} <= ${now}`;
  const rows = await db
    .insert(rateLimitCounters)
    .values(keys.map((key) => ({ key, windowStartedAt: now, hits: 1 })))
    .onConflictDoUpdate({
      target: rateLimitCounters.key,
      set: {
        hits: sql`case when ${windowEnded} then 1 else ${rateLimitCounters.hits} + 1 end`,
        windowStartedAt: sql`case when ${windowEnded} then ${now} else ${rateLimitCounters.windowStartedAt} end`,
      },
    })
    .returning({
      key: rateLimitCounters.key,
      hits: rateLimitCounters.hits,
      windowStartedAt: rateLimitCounters.windowStartedAt,
    });
  return new Map(rows.map(({ key, ...counter }) => [key, counter]));
}

/**
 * The counter behind the store, for limits kept outside @fastify/rate-limit (the mail limits):
 * counts a hit of `key` in its fixed window and answers the count and the milliseconds left.
 */
export function databaseRateLimitCounter(
  db: AppDatabase,
  options: { nowMs?: () => number } = {},
): (key: string, windowMs: number) => Promise<{ current: number; ttl: number }> {
  const nowMs = options.nowMs ?? (() => Date.now());
  let hitsSinceSweep = 0;

  async function hit(key: string, windowMs: number): Promise<{ current: number; ttl: number }> {
    const now = nowMs();
    const row = await incrementWindowCounter(db, key, now, windowMs);
    // Housekeeping without a scheduler: every 100th hit drops counters idle for ten windows. The
    // login counters share the table with longer windows and sweep themselves
    // (src/interaction/login-attempt-limiter.ts).
    if (++hitsSinceSweep >= 100) {
      hitsSinceSweep = 0;
      await db
        .delete(rateLimitCounters)
        .where(
          and(
            lt(rateLimitCounters.windowStartedAt, now - 10 * windowMs),
            notLike(rateLimitCounters.key, `${LOGIN_COUNTER_PREFIX}%`),
          ),
        );
    }
    return { current: row.hits, ttl: Math.max(0, row.windowStartedAt + windowMs - now) };
  }

  return hit;
}
