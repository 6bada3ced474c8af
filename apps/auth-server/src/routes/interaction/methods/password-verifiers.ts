import { dummyPasswordVerify, type User, verifyPassword } from '@oidc-orders/oauth-core';
import { canonicalUsername } from '../../../accounts/canonical-username.js';
import type { Translator } from '../../../i18n/translator.js';
import type { LoginAttemptDecision, LoginAttemptGuard } from '../../../interaction/login-attempts.js';

/** The login form's username and password, with the local record the username names (if any). */
export interface PasswordAttempt {
  username: string;
  password: string;
  ip: string;
  /** The page's language (the request's, src/i18n/): the words of a refusal are in it. */
  language: Translator;
  /** Looked up once for the whole chain: which verifier answers may depend on it. */
  localUser: User | null;
}

/** Fields a verifier adds to the audit events of its answers (the directory's `method`, `source`). */
export type VerifierAuditFields = Readonly<Record<string, string>>;

/**
 * One answer of a password verifier, whichever verifier gave it; ./password.ts answers them all in
 * one place (audit event, rate-limit bookkeeping, page or next step).
 */
export type PasswordOutcome =
  /** The password is right and the account may sign in: the session starts. */
  | { kind: 'verified'; user: User; accountId: string; audit: VerifierAuditFields }
  /** The account's own lock refused the attempt (RFC 6585 §4: 429 with Retry-After). */
  | { kind: 'locked'; decision: Extract<LoginAttemptDecision, { allowed: false }> }
  /**
   * The login page again with `status` and `message`, audited as `reason`. `failure`: a wrong
   * password, which counts against the limits and may warn of the last attempt.
   */
  | {
      kind: 'refused';
      status: number;
      message: string;
      reason: string;
      failure: boolean;
      retryAfterSeconds?: number;
      audit: VerifierAuditFields;
    }
  /** The password must be changed first (a directory's password policy): the change-password step. */
  | {
      kind: 'change_password';
      reason: 'expired' | 'must_change';
      graceLoginsLeft?: number;
      auditReason: string;
      audit: VerifierAuditFields;
    };

/**
 * A place passwords are checked. The chain asks each in turn; the first that answers decides, so a
 * verifier returns `null` for a username that is not its own.
 */
export interface PasswordVerifier {
  readonly name: string;
  verify(attempt: PasswordAttempt, guard: LoginAttemptGuard | undefined): Promise<PasswordOutcome | null>;
}

/** The first answer of the chain; the local verifier, last, answers every username. */
export async function verifyWithChain(
  chain: readonly PasswordVerifier[],
  attempt: PasswordAttempt,
  guard: LoginAttemptGuard | undefined,
): Promise<PasswordOutcome> {
  for (const verifier of chain) {
    const outcome = await verifier.verify(attempt, guard);
    if (outcome !== null) return outcome;
  }
  throw new Error('no password verifier answered (the local one must come last)');
}

/** Seed and `users add` accounts: the scrypt hash stored here. */
export const localPasswordVerifier: PasswordVerifier = {
  name: 'local',
  async verify({ username, password, ip, language, localUser: user }, guard): Promise<PasswordOutcome> {
    // The account is known: its own counter is the person's lock, whatever spelling found it.
    // An unknown name is counted the same way (same queries, same time: no account enumeration).
    if (guard) {
      const accountId = user?.sub ?? `unknown:${canonicalUsername(username)}`;
      const decision = await guard.allowAccount({ ip, username }, accountId);
      if (!decision.allowed) return { kind: 'locked', decision };
    }
    // An unknown username costs the same scrypt run as a known one: timing does not tell them apart.
    let valid = false;
    if (user === null) await dummyPasswordVerify();
    else valid = await verifyPassword(password, user.passwordHash);
    if (user === null || !valid) {
      return {
        kind: 'refused',
        status: 401,
        message: language.text('login.invalidCredentials'),
        reason: user === null ? 'unknown_user' : 'wrong_password',
        failure: true,
        audit: user === null ? {} : ({ sub: user.sub } as VerifierAuditFields),
      };
    }
    return { kind: 'verified', user, accountId: user.sub, audit: {} };
  },
};
