import { ENGLISH, type Translator } from '../i18n/translator.js';
/**
 * Login attempts as the rate limits see them, and the words a person reads about them: shared by
 * the login form, the second-factor pages and the account page's password change, which all count
 * on the same per-username lock.
 */

/** One login attempt, as a rate limiter sees it. */
export interface LoginAttempt {
  ip: string;
  /** As typed: the limiter counts it under its canonical form (src/accounts/canonical-username.ts). */
  username: string;
}

/** What a guard decides before the password is checked; a refusal says how long to wait. */
export type LoginAttemptDecision =
  | {
      allowed: true;
      /** Attempts left before the lock (fewest over the limits that apply), when a limit applies. */
      remaining?: number;
      /** How long the lock then lasts, seconds. */
      lockSeconds?: number;
    }
  | { allowed: false; limit: 'username' | 'ip' | 'account'; retryAfterSeconds: number };

/**
 * Throttles login attempts per IP, per person and per account (./login-attempt-limiter.ts).
 * `allow` runs before the password is checked, on the canonical username (the account is not known
 * yet); `allowAccount` once the attempt is known to be for one account (its stable id: a local
 * `sub`, a directory entry's stable id), so two names of one person share one lock. Refusing
 * answers 429 (with `Retry-After`) without checking the password, or without accepting a right one.
 */
export interface LoginAttemptGuard {
  allow(attempt: LoginAttempt): Promise<LoginAttemptDecision>;
  allowAccount(attempt: LoginAttempt, accountId: string): Promise<LoginAttemptDecision>;
  recordFailure(attempt: LoginAttempt): Promise<void>;
  /** Clears the person's counters (the typed name's and, when known, the account's). */
  recordSuccess(attempt: LoginAttempt, accountId?: string): Promise<void>;
}

/** Tells a locked-out person when to come back (the same time as `Retry-After`). */
export function tooManyAttemptsMessage(retryAfterSeconds: number, t: Translator = ENGLISH): string {
  return retryAfterSeconds < 60
    ? t.text('login.tooManyAttempts', { unit: 'seconds', count: retryAfterSeconds })
    : t.text('login.tooManyAttempts', { unit: 'minutes', count: Math.ceil(retryAfterSeconds / 60) });
}

/**
 * Said with a failure that leaves one attempt: a person who mistyped learns before the lock, not
 * after. Counted per username whether or not it exists, so it tells nothing about accounts.
 */
export function lastAttemptWarning(
  decision: LoginAttemptDecision,
  t: Translator = ENGLISH,
): string | undefined {
  if (!decision.allowed || decision.remaining !== 1 || decision.lockSeconds === undefined) return undefined;
  return t.text('login.lastAttempt', { minutes: Math.ceil(decision.lockSeconds / 60) });
}

/** Same text for an unknown user and a wrong password, so the page does not reveal which usernames exist. */
export const INVALID_CREDENTIALS_MESSAGE = 'Invalid username or password.';
