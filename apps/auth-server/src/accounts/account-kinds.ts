/**
 * The kinds of local account and what each may do: the one table the features read (README
 * "Security and operations", "Accounts"). `users.managed_by` stores who keeps the row; the kind is
 * read from it (`accountKindOf`), never decided again in a feature.
 *
 * - `seed`: named by the seed file (the file is the truth: a start whose file drops it disables it).
 * - `local`: added by an operator (`users add`), or a seed user an operator took over.
 * - `directory`: made at a first sign-in with a directory (LDAP) account; the directory keeps it.
 * - `federated`: made at a first sign-in through an upstream OpenID provider; that provider keeps it.
 */
export type AccountKind = 'seed' | 'local' | 'directory' | 'federated';

/** `users.managed_by`, as stored (src/db/schema.ts). */
export type ManagedBy = 'seed' | 'operator' | 'directory' | 'federation';

/** Mail that acts on the account (not notices): a reset link, an upstream link's proof. */
export type AccountMailPurpose = 'password_reset' | 'upstream_link';

export interface AccountKindRules {
  /** It signs in with a password kept here (a scrypt hash); else its row holds a placeholder no password matches. */
  localPassword: boolean;
  /**
   * The account mail it may receive, at an address that is its own (./account-mail.ts): a password
   * reset only with a local password to reset (OWASP Forgot Password Cheat Sheet: recovery goes to
   * a channel the account owns; Kratos sends recovery only to the addresses its identity schema
   * marks for it); the proof of an upstream link when an upstream identity may be linked to it by
   * a verified address (src/federation/email-linking.ts), which a federated account may not.
   */
  receives: Record<AccountMailPurpose, boolean>;
  /** An address given to it unverified is still its own (the operator vouched for it): not so for a provider's claim. */
  unverifiedAddressIsOwn: boolean;
  /**
   * Who owns its profile claims (`name`, `email`, `groups`) when it is made: `local` (the person and
   * the operator change them here), `directory` (rewritten at each directory sign-in) or `provider`
   * (the provider it was made by rewrites them at each sign-in). Per claim, `claim_sources` then
   * records changes (src/accounts/claim-ownership.ts).
   */
  claimOwner: 'local' | 'directory' | 'provider';
  /** What `users disable` means for it (the CLI and the operator console say so). */
  disableMeans: string;
}

export const ACCOUNT_KINDS: Record<AccountKind, AccountKindRules> = {
  seed: {
    localPassword: true,
    receives: { password_reset: true, upstream_link: true },
    unverifiedAddressIsOwn: true,
    claimOwner: 'local',
    disableMeans: 'no sign-in, tokens stop; the seed never re-enables what an operator disabled',
  },
  local: {
    localPassword: true,
    receives: { password_reset: true, upstream_link: true },
    unverifiedAddressIsOwn: true,
    claimOwner: 'local',
    disableMeans: 'no sign-in, tokens stop; `users enable` undoes it',
  },
  directory: {
    localPassword: false,
    receives: { password_reset: false, upstream_link: true },
    unverifiedAddressIsOwn: false,
    claimOwner: 'directory',
    disableMeans:
      'the local record refuses sign-in even when the directory accepts the password; the entry is untouched',
  },
  federated: {
    localPassword: false,
    receives: { password_reset: false, upstream_link: false },
    unverifiedAddressIsOwn: false,
    claimOwner: 'provider',
    disableMeans: 'sign-in through every linked provider is refused; the upstream account is untouched',
  },
};

const KIND_BY_MANAGER: Record<ManagedBy, AccountKind> = {
  seed: 'seed',
  operator: 'local',
  directory: 'directory',
  federation: 'federated',
};

export const accountKindOf = (managedBy: ManagedBy): AccountKind => KIND_BY_MANAGER[managedBy];

export const rulesOf = (managedBy: ManagedBy): AccountKindRules => ACCOUNT_KINDS[accountKindOf(managedBy)];
