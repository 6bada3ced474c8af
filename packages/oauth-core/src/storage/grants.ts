import type { AuthorizationCode, Grant, User } from '../model.js';
import type { IssuedTokenRecords } from './tokens.js';

/** An authorization code with what its redemption needs next: its grant and its user, `null` when gone. */
export interface AuthorizationCodeWithGrantAndUser {
  code: AuthorizationCode;
  grant: Grant | null;
  user: User | null;
}

export interface GrantStore {
  createGrant(grant: Grant): Promise<void>;
  findGrant(id: string): Promise<Grant | null>;
  /**
   * Every grant obtained in the SSO session `sid` (OIDC `sid`), revoked ones included, in no
   * particular order; `[]` when there is none. Logout uses it to find the clients to notify.
   */
  findGrantsBySid(sid: string): Promise<Grant[]>;
  /**
   * Marks the grant revoked and, in the same unit of work, revokes every refresh token and
   * opaque access token that carries its id. Idempotent: revoking twice keeps the first time.
   * JWT access tokens of the grant become inactive for introspection through the grant's state.
   */
  revokeGrant(id: string, at: number): Promise<void>;
}

export interface AuthorizationCodeStore {
  createAuthorizationCode(code: AuthorizationCode): Promise<void>;
  /** The code by hash whether used or not (the handler needs to see reuse). */
  findAuthorizationCode(codeHash: string): Promise<AuthorizationCode | null>;
  /**
   * Marks the code used if and only if it is still unused, atomically across processes
   * (`UPDATE … SET used_at = $at WHERE code_hash = $1 AND used_at IS NULL RETURNING`).
   * Returns `true` for the single caller that won; `false` for everyone else.
   */
  consumeAuthorizationCode(codeHash: string, at: number): Promise<boolean>;
  /**
   * Optional fast path (one database read instead of three): `findAuthorizationCode(codeHash)` with
   * `GrantStore.findGrant(code.grantId)` and `UserStore.findUserBySub(code.sub)`. `null` when the
   * code is unknown. Callers use `findAuthorizationCodeWithGrantAndUser(stores, hash)`.
   */
  findAuthorizationCodeWithGrantAndUser?(codeHash: string): Promise<AuthorizationCodeWithGrantAndUser | null>;
  /**
   * Optional fast path of a redemption as one atomic unit: `consumeAuthorizationCode(codeHash, at)`
   * and, only for its single winner, the writes of `issued`. `true` for that winner; `false` writes
   * nothing. Callers use `commitCodeRedemption`, which falls back to `transaction`.
   */
  redeemAuthorizationCode?(codeHash: string, at: number, issued: IssuedTokenRecords): Promise<boolean>;
  /**
   * Optional fast path of issuing a code: `GrantStore.createGrant(grant)` and
   * `createAuthorizationCode(code)` as one atomic unit (one statement instead of a transaction of
   * four round trips). Callers use `storeGrantWithCode`, which falls back to `transaction`.
   */
  createAuthorizationCodeWithGrant?(grant: Grant, code: AuthorizationCode): Promise<void>;
}
