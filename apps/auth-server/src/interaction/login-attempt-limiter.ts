import { createHash } from 'node:crypto';
import { and, eq, inArray, like, lt, sql } from 'drizzle-orm';
import { canonicalUsername } from '../accounts/canonical-username.js';
import type { AppDatabase } from '../db/client.js';
import { rateLimitCounters } from '../db/schema.js';
import { incrementWindowCounters, LOGIN_COUNTER_PREFIX } from '../http/database-rate-limit-store.js';
import type { LoginAttempt, LoginAttemptDecision, LoginAttemptGuard } from './login-attempts.js';

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
 * The lock is per person, not per spelling: a username is counted under its canonical form
 * (trimmed, spaces collapsed, case-folded: a directory finds `Dana` and `DANA` as `dana`), and once
 * the attempt is known to be for one account, under that account's stable id as well
 * (`allowAccount`), so another name of the same entry does not bring fresh guesses.
 *
 * Usernames and account ids are stored as a SHA-256 (a mistyped password in the username field
 * stays out of the table). Locking a username is a denial-of-service lever for whoever knows it; the window bounds
 * it, and the per-IP limit makes spraying many usernames from one address expensive.
 */
export function createLoginAttemptLimiter(
  db: AppDatabase,
  limits: LoginAttemptLimits,
  options: { nowMs?: () => number } = {},
): LoginAttemptGuard {
  const nowMs = options.nowMs ?? (() => Date.now());
  const windowMs = limits.windowSeconds * 1000;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest('base64url');
  const usernameKey = (username: string) =>
    `${LOGIN_COUNTER_PREFIX}username:${digest(canonicalUsername(username))}`;
  const accountKey = (accountId: string) => `${LOGIN_COUNTER_PREFIX}account:${digest(accountId)}`;
  const ipKey = (ip: string) => `${LOGIN_COUNTER_PREFIX}ip:${ip}`;
  let hitsSinceSweep = 0;

  /** One more hit on each of `keys` (one statement); each key's count and when its window ends. */
  async function hit(
    keys: readonly string[],
    now: number,
  ): Promise<Map<string, { hits: number; windowEndsAt: number }>> {
    const rows = await incrementWindowCounters(db, keys, now, windowMs);
    // Housekeeping without a scheduler: about every 100th hit drops login counters whose window
    // ended more than a window ago.
    hitsSinceSweep += keys.length;
    if (hitsSinceSweep >= 100) {
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
    const counts = new Map<string, { hits: number; windowEndsAt: number }>();
    for (const [key, row] of rows)
      counts.set(key, { hits: row.hits, windowEndsAt: row.windowStartedAt + windowMs });
    return counts;
  }

  const checks = (attempt: LoginAttempt) => {
    const list: Array<{ key: string; max: number; limit: 'username' | 'ip' | 'account' }> = [];
    if (limits.maxFailuresPerIp > 0) {
      list.push({ key: ipKey(attempt.ip), max: limits.maxFailuresPerIp, limit: 'ip' });
    }
    if (limits.maxFailuresPerUsername > 0 && canonicalUsername(attempt.username) !== '') {
      list.push({
        key: usernameKey(attempt.username),
        max: limits.maxFailuresPerUsername,
        limit: 'username',
      });
    }
    return list;
  };

  type Check = ReturnType<typeof checks>[number];

  /** Counts one hit on each check; refuses when one is past its limit (the longest wait wins). */
  async function decide(list: Check[]): Promise<LoginAttemptDecision> {
    const now = nowMs();
    let refusal: LoginAttemptDecision = { allowed: true };
    let remaining = Number.POSITIVE_INFINITY;
    const counts = await hit(
      list.map((check) => check.key),
      now,
    );
    for (const check of list) {
      const counted = counts.get(check.key);
      if (counted === undefined) throw new Error('the counter upsert returned no row');
      const { hits, windowEndsAt } = counted;
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
  }

  return {
    allow: (attempt) => decide(checks(attempt)),
    // The per-username limit, on the account's own counter: the same budget for the person.
    allowAccount: (_attempt, accountId) =>
      limits.maxFailuresPerUsername > 0
        ? decide([{ key: accountKey(accountId), max: limits.maxFailuresPerUsername, limit: 'account' }])
        : Promise.resolve({ allowed: true }),
    // The attempt was already counted by `allow` (and `allowAccount`).
    async recordFailure() {},
    async recordSuccess(attempt, accountId) {
      const cleared =
        limits.maxFailuresPerUsername > 0
          ? [usernameKey(attempt.username), ...(accountId ? [accountKey(accountId)] : [])]
          : [];
      const clear = () => db.delete(rateLimitCounters).where(inArray(rateLimitCounters.key, cleared));
      if (limits.maxFailuresPerIp <= 0) {
        if (cleared.length > 0) await clear();
        return;
      }
      // The IP's counter taken back and, in the same statement, the person's counters cleared.
      const clearedFirst =
        cleared.length > 0 ? [db.$with('cleared').as(clear().returning({ key: rateLimitCounters.key }))] : [];
      await db
        .with(...clearedFirst)
        .update(rateLimitCounters)
        .set({ hits: sql`greatest(${rateLimitCounters.hits} - 1, 0)` })
        .where(eq(rateLimitCounters.key, ipKey(attempt.ip)));
    },
  };
}
