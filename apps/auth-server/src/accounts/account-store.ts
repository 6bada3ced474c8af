import type { AccountMailPurpose } from './account-kinds.js';
import type { AddressHolder } from './account-mail.js';

/**
 * The local accounts (`users`, `external_identities`), as the features see them (README "Where does
 * my change go": src/accounts/). Mail, the directory, federation and the account pages ask the store
 * which account an address or an identity belongs to and what it may do; the kind of an account
 * (./account-kinds.ts) and the address rules (./account-mail.ts) decide, once, here.
 *
 * Every method may run inside a caller's transaction (the Drizzle store takes a `PgDatabase`, which a
 * transaction is).
 */
export interface AccountStore {
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
}
