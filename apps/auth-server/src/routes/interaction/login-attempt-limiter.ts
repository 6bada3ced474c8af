import { createHash } from 'node:crypto';
import { and, eq, like, lt, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { rateLimitCounters } from '../../db/schema.js';
import { incrementWindowCounter, LOGIN_COUNTER_PREFIX } from '../../http/database-rate-limit-store.js';
import type { LoginAttempt, LoginAttemptDecision, LoginAttemptGuard } from './index.js';

export interface LoginAttemptLimits {
  /** Failures per username in one window before it is locked (0 = no limit). */
  maxFailuresPerUsername: number;
  /** Failures per client IP in one window before it is refused (0 = no limit). */
  maxFailuresPerIp: number;
  windowSeconds: number;
}

/**
 * Throttles password guessing (OWASP ASVS V2.2.1) with fixed-window counters in the shared
 * `rate_limit_counters` table, so the limits hold across every instance behind a load balancer.
 *
 * - `allow` counts the attempt first (one upsert per counter) and refuses when a counter is past
 *   its limit. Counting before the password check means a burst of parallel guesses is counted
 *   too, not only the ones that finished.
 * - `recordSuccess` takes the attempt back: it clears the username's counter and decrements the
 *   IP's, so in the end only failures count and people signing in successfully behind one NAT
 *   address never lock each other out.
 * - A window starts at the first failure and ends `windowSeconds` later; a locked username or IP is
 *   refused until then (the page and `Retry-After` say how long), whatever the password.
 *
 * Usernames are stored as a SHA-256 (a mistyped password in the username field stays out of the
 * table). Locking a username is a denial-of-service lever for whoever knows it; the window bounds
 * it, and the per-IP limit makes spraying many usernames from one address expensive.
 */
export function createLoginAttemptLimiter(
  db: AppDatabase,
  limits: LoginAttemptLimits,
  options: { nowMs?: () => number } = {},
): LoginAttemptGuard {
  const nowMs = options.nowMs ?? (() => Date.now());
  const windowMs = limits.windowSeconds * 1000;
  const usernameKey = (username: string) =>
    `${LOGIN_COUNTER_PREFIX}username:${createHash('sha256').update(username, 'utf8').digest('base64url')}`;
  const ipKey = (ip: string) => `${LOGIN_COUNTER_PREFIX}ip:${ip}`;
  let hitsSinceSweep = 0;

  /** One more hit on `key`; returns the count in the current window and when that window ends. */
  async function hit(key: string, now: number): Promise<{ hits: number; windowEndsAt: number }> {
    const row = await incrementWindowCounter(db, key, now, windowMs);
    // Housekeeping without a scheduler: every 100th hit drops login counters whose window ended
    // more than a window ago.
    if (++hitsSinceSweep >= 100) {
      hitsSinceSweep = 0;
      await db
        .delete(rateLimitCounters)
        .where(
          and(
            like(rateLimitCounters.key, `${LOGIN_COUNTER_PREFIX}%`),
            lt(rateLimitCounters.windowStartedAt, now - 2 * windowMs),
          ),
        );
    }
    return { hits: row.hits, windowEndsAt: row.windowStartedAt + windowMs };
  }

  const checks = (attempt: LoginAttempt) => {
    const list: Array<{ key: string; max: number; limit: 'username' | 'ip' }> = [];
    if (limits.maxFailuresPerIp > 0) {
      list.push({ key: ipKey(attempt.ip), max: limits.maxFailuresPerIp, limit: 'ip' });
    }
    if (limits.maxFailuresPerUsername > 0 && attempt.username !== '') {
      list.push({
        key: usernameKey(attempt.username),
        max: limits.maxFailuresPerUsername,
        limit: 'username',
      });
    }
    return list;
  };

  return {
    async allow(attempt): Promise<LoginAttemptDecision> {
      const now = nowMs();
      let refusal: LoginAttemptDecision = { allowed: true };
      let remaining = Number.POSITIVE_INFINITY;
      for (const check of checks(attempt)) {
        const { hits, windowEndsAt } = await hit(check.key, now);
        remaining = Math.min(remaining, check.max - hits);
        // `>`: the attempt that reaches the limit is still checked; the one after it is refused.
        if (hits > check.max) {
          const retryAfterSeconds = Math.max(1, Math.ceil((windowEndsAt - now) / 1000));
          if (refusal.allowed || retryAfterSeconds > refusal.retryAfterSeconds) {
            refusal = { allowed: false, limit: check.limit, retryAfterSeconds };
          }
        }
      }
      if (!refusal.allowed || remaining === Number.POSITIVE_INFINITY) return refusal;
      return { allowed: true, remaining, lockSeconds: limits.windowSeconds };
    },
    // The attempt was already counted by `allow`.
    async recordFailure() {},
    async recordSuccess(attempt) {
      if (limits.maxFailuresPerUsername > 0 && attempt.username !== '') {
        await db.delete(rateLimitCounters).where(eq(rateLimitCounters.key, usernameKey(attempt.username)));
      }
      if (limits.maxFailuresPerIp > 0) {
        await db
          .update(rateLimitCounters)
          .set({ hits: sql`greatest(${rateLimitCounters.hits} - 1, 0)` })
          .where(eq(rateLimitCounters.key, ipKey(attempt.ip)));
      }
    },
  };
}
