import type { DirectoryBindOutcome } from './types.js';

/**
 * A refused bind, read as the directory meant it. Active Directory puts a sub-code in the
 * diagnostic message of `invalidCredentials` (49): "… data 52e, …" (MS-ADTS; the codes are Win32
 * errors). OpenLDAP answers with the password-policy response control
 * (draft-behera-ldap-password-policy §6.2) instead.
 */

type Refusal = Exclude<DirectoryBindOutcome, { kind: 'ok' }>;

const ACTIVE_DIRECTORY_SUB_CODES: Readonly<Record<string, Refusal>> = {
  '525': { kind: 'invalid_credentials' }, // ERROR_NO_SUCH_USER
  '52e': { kind: 'invalid_credentials' }, // ERROR_LOGON_FAILURE
  '530': { kind: 'not_permitted', reason: 'time' }, // ERROR_INVALID_LOGON_HOURS
  '531': { kind: 'not_permitted', reason: 'workstation' }, // ERROR_INVALID_WORKSTATION
  '532': { kind: 'password_expired', canChange: true }, // ERROR_PASSWORD_EXPIRED
  '533': { kind: 'account_disabled' }, // ERROR_ACCOUNT_DISABLED
  '701': { kind: 'account_expired' }, // ERROR_ACCOUNT_EXPIRED
  '773': { kind: 'must_change_password', canChange: true }, // ERROR_PASSWORD_MUST_CHANGE
  '775': { kind: 'account_locked' }, // ERROR_ACCOUNT_LOCKED_OUT
};

/** The outcome an Active Directory diagnostic message names, or null when it names none. */
export function activeDirectoryRefusal(message: string): Refusal | null {
  const code = /\bdata ([0-9a-f]{3,4})\b/i.exec(message)?.[1]?.toLowerCase();
  return code === undefined ? null : (ACTIVE_DIRECTORY_SUB_CODES[code] ?? null);
}

/** draft-behera-ldap-password-policy §6.2 `error` values. */
const PPOLICY_PASSWORD_EXPIRED = 0;
const PPOLICY_ACCOUNT_LOCKED = 1;
const PPOLICY_CHANGE_AFTER_RESET = 2;

export interface PasswordPolicyResponse {
  error?: number;
  graceAuthNsRemaining?: number;
  timeBeforeExpiration?: number;
}

/** A refusal the password-policy control explains, or null (a plain wrong password). */
export function passwordPolicyRefusal(policy: PasswordPolicyResponse | undefined): Refusal | null {
  if (policy?.error === PPOLICY_PASSWORD_EXPIRED) return { kind: 'password_expired', canChange: false };
  if (policy?.error === PPOLICY_ACCOUNT_LOCKED) return { kind: 'account_locked' };
  return null;
}

/**
 * A successful bind that the policy still restricts: after an administrator's reset the session may
 * only change the password (§5.2.2.1 `changeAfterReset`), so the sign-in must not go on.
 */
export function mustChangeAfterBind(policy: PasswordPolicyResponse | undefined): boolean {
  return policy?.error === PPOLICY_CHANGE_AFTER_RESET;
}
