import { type AccountMailPurpose, type ManagedBy, rulesOf } from './account-kinds.js';

/** An account holding an address, as the mail rule sees it. */
export interface AddressHolder {
  sub: string;
  managedBy: ManagedBy;
  emailVerified: boolean;
  /** `claim_sources.email`: who gave the address (absent or `local`: the operator or the person here). */
  emailSource: string | undefined;
}

const givenHere = (holder: AddressHolder) =>
  holder.emailSource === undefined || holder.emailSource === 'local';

/**
 * Whether the address is the holder's own: verified for it, or given unverified by the operator to
 * a kind that trusts that (seed, local). A provider's unverified claim, or a directory attribute
 * nobody verified, is never enough.
 */
export function addressIsOwn(holder: AddressHolder): boolean {
  return holder.emailVerified || (rulesOf(holder.managedBy).unverifiedAddressIsOwn && givenHere(holder));
}

/**
 * The one account that may receive account mail for `purpose` (a password reset, an upstream
 * link's proof) sent to an address, among the enabled accounts holding it, or `null` (then no mail
 * goes: the answer to the person is the same either way).
 * - A verified address belongs to one account: when any holder has it verified, only that holder
 *   can be the one, and only when it is alone.
 * - Otherwise the holder whose own it is (the operator gave it), when there is exactly one.
 * - Its kind must receive that mail (./account-kinds.ts): no reset without a local password, no
 *   account mail at all for a federated account, so an upstream identity that merely claims
 *   someone's address never takes their mail.
 */
export function accountMailRecipient(
  holders: readonly AddressHolder[],
  purpose: AccountMailPurpose,
): string | null {
  const owner = addressOwner(holders);
  return owner && rulesOf(owner.managedBy).receives[purpose] ? owner.sub : null;
}

/**
 * The one account an address belongs to, or `null` when none or several: the holder it is
 * verified for, else the one whose own it is. Also the account a first upstream sign-in with that
 * address (verified upstream) may be linked to, when its kind may be a link target.
 */
export function addressOwner(holders: readonly AddressHolder[]): AddressHolder | null {
  const verified = holders.filter((holder) => holder.emailVerified);
  const candidates = verified.length > 0 ? verified : holders.filter(addressIsOwn);
  return candidates.length === 1 ? (candidates[0] ?? null) : null;
}

/**
 * May `sub` have the address marked verified (a completed reset, a confirmed link, an upstream's
 * `email_verified`)? Only when no other account has it as its own: a verified address belongs to
 * one account, and a provider's claim never shadows the owner the operator gave it to.
 */
export function mayVerifyAddress(sub: string, holders: readonly AddressHolder[]): boolean {
  return !holders.some((holder) => holder.sub !== sub && addressIsOwn(holder));
}
