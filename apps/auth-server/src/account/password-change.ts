import { type Clock, hashPassword, type User, verifyPassword } from '@oidc-orders/oauth-core';
import type { FastifyBaseLogger } from 'fastify';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import { AUDIT_EVENTS, audit } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { ENGLISH, type Translator } from '../i18n/translator.js';
import {
  type LoginAttemptDecision,
  type LoginAttemptGuard,
  tooManyAttemptsMessage,
} from '../interaction/login-attempts.js';
import type { UserSignOut } from '../logout/user-sign-out.js';
import { passwordProblem } from './common-passwords.js';

export interface PasswordChangeDeps {
  db: AppDatabase;
  clock: Clock;
  /** The login form's limiter: wrong current passwords count against the same per-user lock. */
  attempts: LoginAttemptGuard | undefined;
  signOut: Pick<UserSignOut, 'endUserSessions'>;
  log: FastifyBaseLogger;
}

export interface PasswordChangeRequest {
  user: User;
  /** The session asking: it stays signed in, every other one ends. */
  sessionId: string;
  ip: string;
  currentPassword: string;
  newPassword: string;
  /** The form's confirmation field, when it has one. */
  confirmPassword: string | undefined;
}

export type PasswordChangeOutcome =
  | { kind: 'refused'; problem: string }
  | { kind: 'locked'; retryAfterSeconds: number }
  | { kind: 'wrong_current_password' }
  | { kind: 'changed'; otherSessionsEnded: number };

/** The form's fields: `current_password`, `new_password` and, when the form has it, `confirm_password`. */
export function passwordChangeFields(
  body: unknown,
): Pick<PasswordChangeRequest, 'currentPassword' | 'newPassword' | 'confirmPassword'> {
  const fields = (body ?? {}) as Record<string, unknown>;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return {
    currentPassword: text(fields.current_password),
    newPassword: text(fields.new_password),
    confirmPassword: fields.confirm_password === undefined ? undefined : text(fields.confirm_password),
  };
}

/** Why the new password is refused (rules of src/account/common-passwords.ts, confirmation), or null. */
async function newPasswordProblem(request: PasswordChangeRequest): Promise<string | null> {
  if (request.confirmPassword !== undefined && request.confirmPassword !== request.newPassword) {
    return 'The new password and its confirmation differ.';
  }
  return passwordProblem(request.newPassword, request.user.username);
}

/** The login form's checks: the typed name's lock, then the account's own (the same person's). */
async function allowedAttempt(
  attempts: LoginAttemptGuard | undefined,
  attempt: { ip: string; username: string },
  sub: string,
): Promise<LoginAttemptDecision> {
  if (!attempts) return { allowed: true };
  const byName = await attempts.allow(attempt);
  return byName.allowed ? attempts.allowAccount(attempt, sub) : byName;
}

/**
 * A signed-in person changes their password (the account page; a future reset by mail calls
 * `userSignOut.endUserSessions` the same way). The order is what keeps it from being a password
 * oracle for whoever holds the session (a stolen cookie, an unlocked browser):
 * 1. the new password is checked first, so a refused one never tells whether the current was right;
 * 2. the current password is a sign-in attempt of the user: the login form's limiter counts it
 *    (OWASP ASVS V2.2.1), on the same per-user counter in the shared database, and once the user is
 *    locked it is not compared at all;
 * 3. after the change every other session ends (back-channel logout to its relying parties) and
 *    every grant is revoked: whoever knew the old password is out; this browser stays signed in.
 */
export async function changePassword(
  request: PasswordChangeRequest,
  deps: PasswordChangeDeps,
): Promise<PasswordChangeOutcome> {
  const { user } = request;
  const problem = await newPasswordProblem(request);
  if (problem !== null) return { kind: 'refused', problem };
  const attempt = { ip: request.ip, username: user.username };
  const decision = await allowedAttempt(deps.attempts, attempt, user.sub);
  if (!decision.allowed) {
    audit(deps.log, AUDIT_EVENTS.rateLimitExceeded, {
      limit: decision.limit === 'ip' ? 'login_ip' : 'login_username',
      ip: request.ip,
      retry_after_seconds: decision.retryAfterSeconds,
    });
    return { kind: 'locked', retryAfterSeconds: decision.retryAfterSeconds };
  }
  if (!(await verifyPassword(request.currentPassword, user.passwordHash))) {
    await deps.attempts?.recordFailure(attempt);
    audit(deps.log, AUDIT_EVENTS.passwordChangeFailed, { sub: user.sub, reason: 'wrong_password' });
    return { kind: 'wrong_current_password' };
  }
  await deps.attempts?.recordSuccess(attempt, user.sub);
  await createDrizzleAccountStore(deps.db).setPassword(
    user.sub,
    await hashPassword(request.newPassword),
    deps.clock.nowSeconds(),
  );
  const ended = await deps.signOut.endUserSessions(user.sub, request.sessionId);
  audit(deps.log, AUDIT_EVENTS.passwordChanged, { sub: user.sub, count: ended.sessions });
  return { kind: 'changed', otherSessionsEnded: ended.sessions };
}

/** What the account page answers for an outcome: status, notice and, when locked, `Retry-After`. */
export function passwordChangeAnswer(
  outcome: PasswordChangeOutcome,
  t: Translator = ENGLISH,
): {
  status: number;
  notice: { kind: 'ok' | 'error'; text: string };
  retryAfterSeconds?: number;
} {
  switch (outcome.kind) {
    case 'refused':
      return { status: 400, notice: { kind: 'error', text: outcome.problem } };
    case 'locked':
      // RFC 6585 §4, as the login form: 429 with Retry-After, the page saying the same in words.
      return {
        status: 429,
        notice: { kind: 'error', text: tooManyAttemptsMessage(outcome.retryAfterSeconds, t) },
        retryAfterSeconds: outcome.retryAfterSeconds,
      };
    case 'wrong_current_password':
      return { status: 400, notice: { kind: 'error', text: t.text('accountNotice.wrongCurrentPassword') } };
    case 'changed': {
      const text = t.text('accountNotice.passwordChanged', { count: outcome.otherSessionsEnded });
      return { status: 200, notice: { kind: 'ok', text } };
    }
  }
}
