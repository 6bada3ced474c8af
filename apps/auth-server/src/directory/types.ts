/**
 * A directory (LDAP, Active Directory) as a source of users, seen by the rest of the server.
 * `directory/` talks LDAP; sign-in, the local account record and the refresh check use only this
 * interface. Nothing here is loaded when `LDAP_URL` is not set.
 */

/** One person in the directory, as read with the service account. */
export interface DirectoryEntry {
  /** The directory's stable id (`entryUUID`, or `objectGUID` decoded to its canonical string form). */
  stableId: string;
  /** The entry's DN as the directory returned it (never built from input). */
  dn: string;
  /** The sign-in name the user types (the attribute the filter matches, e.g. `uid`, `sAMAccountName`). */
  username: string;
  name: string | null;
  email: string | null;
  /** True only when the directory is configured as vouching for its addresses. */
  emailVerified: boolean;
  /** Group names (`cn`), each of a group matched by its full DN under `LDAP_GROUP_BASE_DN`. */
  groups: readonly string[];
  /** `userPrincipalName` or `krbPrincipalName`, when present. */
  kerberosPrincipal: string | null;
}

/**
 * What a password bind said. Each refusal is its own outcome (Active Directory's bind sub-codes,
 * OpenLDAP's password-policy control), so the page can say what happened instead of one
 * "invalid credentials"; `unavailable` is the directory down or slower than the bound.
 */
export type DirectoryBindOutcome =
  | {
      kind: 'ok';
      entry: DirectoryEntry;
      /** OpenLDAP ppolicy: grace logins left after expiry; AD/ppolicy: seconds until expiry. */
      graceLoginsLeft?: number;
      passwordExpiresInSeconds?: number;
    }
  /** Wrong password, or no such user (AD 52e, 525): the same answer, timing equalised. */
  | {
      kind: 'invalid_credentials';
      /** The entry the name found, when one was found (the wrong password then counts on its lock). */
      stableId?: string;
    }
  /** AD 532, ppolicy passwordExpired; `canChange`: the directory accepts a change with the old password. */
  | { kind: 'password_expired'; canChange: boolean }
  /** AD 773, ppolicy changeAfterReset. */
  | { kind: 'must_change_password'; canChange: boolean }
  /** AD 775, ppolicy accountLocked. */
  | { kind: 'account_locked' }
  /** AD 533, or the configured disabled flag (userAccountControl bit 2). */
  | { kind: 'account_disabled' }
  /** AD 701. */
  | { kind: 'account_expired' }
  /** AD 530 (not permitted at this time), 531 (not permitted from this workstation). */
  | { kind: 'not_permitted'; reason: 'time' | 'workstation' }
  | { kind: 'unavailable' };

export type DirectoryLookup = DirectoryEntry | null | 'unavailable';

export type PasswordChangeOutcome =
  | { kind: 'changed' }
  /** The old password is wrong, or the new one breaks the directory's policy (its message kept). */
  | { kind: 'refused'; reason: 'invalid_credentials' | 'policy'; message?: string }
  | { kind: 'unavailable' };

export interface Directory {
  /** Finds the user with the service account (filter escaped per RFC 4515), then binds as them. */
  authenticate(username: string, password: string): Promise<DirectoryBindOutcome>;
  /** The entry with this stable id, if it still exists and is enabled (refresh and sign-in checks). */
  lookupByStableId(stableId: string): Promise<DirectoryLookup>;
  lookupByUsername(username: string): Promise<DirectoryLookup>;
  /** A Kerberos client principal (`name@REALM`) mapped to its entry. */
  lookupByKerberosPrincipal(principal: string): Promise<DirectoryLookup>;
  /** Entries under the user base (for `users list`), at most `limit`. */
  list(limit: number): Promise<readonly DirectoryEntry[] | 'unavailable'>;
  /** Changes an expired or must-change password against the directory with the old one. */
  changePassword(username: string, oldPassword: string, newPassword: string): Promise<PasswordChangeOutcome>;
  close(): Promise<void>;
}
