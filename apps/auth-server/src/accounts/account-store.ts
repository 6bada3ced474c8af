import type { EnrolledFactors, User } from '@oidc-orders/oauth-core';
import type { users } from '../db/schema.js';
import type { AccountMailPurpose } from './account-kinds.js';
import type { AddressHolder } from './account-mail.js';
import type { Profile } from './claim-ownership.js';

/** The account a session names, its enrolled second factors, and what it approved for a client. */
export interface SignInSubject {
  user: User;
  enrolled: EnrolledFactors;
  /** The scopes the user approved for the client so far (empty when none). */
  rememberedScopes: string[];
}

/** What a directory account's local record is made from (src/directory/types.ts `DirectoryEntry`). */
export interface DirectoryAccountEntry {
  stableId: string;
  username: string;
  name: string | null;
  email: string | null;
  emailVerified: boolean;
  groups: readonly string[];
}

/** `linked`: recorded now; `already_linked`: it was this account's; `linked_to_other`: another account's. */
export type IdentityLinkOutcome = 'linked' | 'already_linked' | 'linked_to_other';

/**
 * The local accounts (`users`, `external_identities`), as the features see them (README "Where does
 * my change go": src/accounts/). Mail, the directory, federation and the account pages ask the store
 * which account an address or an identity belongs to and what it may do; the kind of an account
 * (./account-kinds.ts) and the address rules (./account-mail.ts) decide, once, here.
 *
 * Every method may run inside a caller's transaction (the Drizzle store takes a `PgDatabase`, which a
 * transaction is).
 */
/** An account's row as the features read it (`users`). */
export type AccountRecord = typeof users.$inferSelect;

export interface AccountStore {
  /** The account `sub`, enabled or not, or `null`. */
  findAccount(sub: string): Promise<AccountRecord | null>;
  /** The account of this exact username, enabled or not, or `null` (the operator commands name users so). */
  findAccountByUsername(username: string): Promise<AccountRecord | null>;
  /**
   * Remembers the language the user's pages were in (a supported code), so mails sent later
   * without a page (reset, notices) speak it. Writes only when it changed.
   */
  recordLanguage(sub: string, language: string): Promise<void>;
  /** Every account, by username. */
  listAccounts(): Promise<AccountRecord[]>;
  /** A `local` account an operator adds (`users add`): the seed file does not name it and leaves it alone. */
  addLocalAccount(
    account: {
      sub: string;
      username: string;
      passwordHash: string;
      name: string | null;
      email: string | null;
    },
    now: number,
  ): Promise<void>;
  /**
   * Sets the password hash of an account whose kind has a local password (./account-kinds.ts),
   * only while its hash is still `replacing` when given (a reset link bound to the password it
   * replaces). `provesAddress`: the change was made through a link mailed there, which proves the
   * address while it is still the account's own and no other account has it (./account-mail.ts).
   * True when changed.
   */
  setPassword(
    sub: string,
    passwordHash: string,
    now: number,
    conditions?: { replacing?: string; provesAddress?: string },
  ): Promise<boolean>;
  /**
   * `email` becomes the account's address, proven by a link mailed there: the person's own from now
   * on (its claim owned locally), verified unless another account has it as its own.
   */
  setProvenAddress(sub: string, email: string, now: number): Promise<void>;
  /** Marks the account's address verified, when it is still `email` and no other account has it; true when marked. */
  markAddressVerified(sub: string, email: string, now: number): Promise<boolean>;

  /** The enabled accounts whose address is `email`, compared case-insensitively. */
  addressHolders(email: string): Promise<AddressHolder[]>;
  /**
   * The `sub` of the one account that may receive account mail (reset, link proof) at `email`
   * (./account-mail.ts `accountMailRecipient`), or `null`.
   */
  accountMailRecipient(email: string, purpose: AccountMailPurpose): Promise<string | null>;
  /** The `sub` of the one account `email` belongs to (./account-mail.ts `addressOwner`), whatever its kind, or `null`. */
  addressOwner(email: string): Promise<string | null>;
  /**
   * Whether `sub` may have `email` marked verified: no other enabled account has it as its own
   * (./account-mail.ts `mayVerifyAddress`).
   */
  mayVerifyAddress(sub: string, email: string): Promise<boolean>;

  /** The account an external identity (source `ldap` or `idp:<id>`, its stable subject) signs in, or `null`. */
  findLinkedSub(source: string, subject: string): Promise<string | null>;
  /** The subject at `source` (the first, if several) that enters `sub`, or `null`. */
  externalSubjectOf(source: string, sub: string): Promise<string | null>;
  /**
   * Links an external identity to `sub`, unless it already enters an account: one identity enters
   * one account, and a link never moves it from another (conditional on the primary key, so two
   * concurrent links cannot both win). `signedInNow`: the link is made by a sign-in through it.
   */
  linkIdentity(
    source: string,
    subject: string,
    sub: string,
    now: number,
    signedInNow: boolean,
  ): Promise<IdentityLinkOutcome>;
  /**
   * Removes the link of `source` from `sub`, unless it is the account's last way in: an account
   * without a password keeps its last linked identity (it would be locked out otherwise).
   */
  unlinkIdentity(sub: string, source: string): Promise<'unlinked' | 'last_way_in' | 'unknown'>;
  /**
   * The account of an upstream identity signing in: the linked one (only the claims `source` owns
   * rewritten, ./claim-ownership.ts), or a new federated account, every claim owned by `source` and
   * no local password. `email_verified` is stored only where ./account-mail.ts allows it.
   */
  signInFederated(source: string, subject: string, profile: Profile, now: number): Promise<string>;
  /**
   * The local record of a directory entry, made at its first sign-in and refreshed at each (keyed by
   * the entry's stable id). `null` when an operator disabled it.
   */
  provisionDirectoryAccount(entry: DirectoryAccountEntry, now: number): Promise<User | null>;
}
