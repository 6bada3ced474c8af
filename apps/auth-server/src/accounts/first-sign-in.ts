import { rulesOf } from './account-kinds.js';
import { type AddressHolder, addressOwner } from './account-mail.js';

/** What is known here when an upstream identity comes back from its provider. */
export interface UpstreamArrival {
  /** The upstream's stable subject (`sub`, or `tid:oid`), or null when its claims lack it. */
  subject: string | null;
  /** The local account this (provider, subject) already signs in, or null the first time. */
  linkedSub: string | null;
  /** The provider is trusted to link by a verified address (seed `link_by_verified_email`). */
  linkByVerifiedEmail: boolean;
  /** The address the upstream sent, and whether it said `email_verified: true` for that very address. */
  email: string | null;
  emailVerified: boolean;
  /** The enabled local accounts holding that address (./account-store.ts `addressHolders`). */
  holders: readonly AddressHolder[];
}

export type UpstreamSignInDecision =
  /** Known identity: sign its account in (its owned claims refreshed). */
  | { kind: 'sign_in'; sub: string }
  /** A first sign-in whose verified address is an existing account's: that account proves it first. */
  | { kind: 'offer_link'; sub: string }
  /** A first sign-in of a new person: a federated account, every claim owned by the provider. */
  | { kind: 'create' }
  /** Nothing to key an account on. */
  | { kind: 'refuse'; reason: 'no_subject' };

/**
 * The first-sign-in decision for an upstream identity (README "Upstream identity providers", "One
 * person, one account"), with no I/O:
 * 1. no stable subject: refuse (an account must never be keyed on a mutable name or address);
 * 2. an identity already linked signs its account in;
 * 3. a first sign-in links to an existing account only when the provider is trusted for it, the
 *    upstream says the very address it sent is verified, that address belongs here to one account
 *    (./account-mail.ts `addressOwner`) and that account's kind may be linked (not a federated one);
 *    the link then waits for that account's proof, so a provider lying about addresses takes nothing;
 * 4. otherwise a new federated account.
 */
export function decideUpstreamSignIn(arrival: UpstreamArrival): UpstreamSignInDecision {
  if (arrival.subject === null) return { kind: 'refuse', reason: 'no_subject' };
  if (arrival.linkedSub !== null) return { kind: 'sign_in', sub: arrival.linkedSub };
  if (!arrival.linkByVerifiedEmail || !arrival.emailVerified || !arrival.email) return { kind: 'create' };
  const owner = addressOwner(arrival.holders);
  if (owner === null || !rulesOf(owner.managedBy).receives.upstream_link) return { kind: 'create' };
  return { kind: 'offer_link', sub: owner.sub };
}
