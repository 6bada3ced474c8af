import { boundedGroups, type Profile } from '../accounts/claim-ownership.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import type { UpstreamProvider } from './registry.js';

/**
 * Local accounts of federated identities. An identity is keyed by (provider, upstream subject) and
 * never by a mutable e-mail address or username, so the `sub` we issue stays the same however the
 * upstream renames the person, and a re-created upstream account is a new person.
 */

/** The claims of one upstream sign-in that matter here (the ID token's, after validation). */
export type UpstreamClaims = Record<string, unknown>;

/** `idp:<id>`, the `external_identities.source` of a provider. */
export const sourceOf = (provider: UpstreamProvider) => `idp:${provider.id}`;

/**
 * The upstream's stable subject: `sub`, or for Entra ID `tid:oid` (tenant and object id, which
 * Microsoft documents as the stable key; its `sub` is pairwise per application and its `email`
 * and `preferred_username` are mutable). `null` when the claims lack it.
 */
export function upstreamSubject(provider: UpstreamProvider, claims: UpstreamClaims): string | null {
  const text = (name: string) =>
    typeof claims[name] === 'string' && claims[name] !== '' ? (claims[name] as string) : null;
  if (provider.subjectClaims === 'tid_oid') {
    const tid = text('tid');
    const oid = text('oid');
    return tid && oid ? `${tid}:${oid}` : null;
  }
  return text('sub');
}

/**
 * The profile claims the provider's mapping names (OIDC Core §5.1 names by default), with
 * anything not a string dropped, and its groups within `boundedGroups`' safe limits.
 */
export function mappedProfile(provider: UpstreamProvider, claims: UpstreamClaims): Profile {
  const text = (name: string) => (typeof claims[name] === 'string' ? (claims[name] as string) : null);
  const email = text(provider.claims.email);
  return {
    name: text(provider.claims.name),
    email,
    emailVerified: email !== null && claims.email_verified === true,
    groups: boundedGroups(claims[provider.claims.groups]),
  };
}

/** The account an upstream identity signs in, or `null` the first time (src/accounts/). */
export function findLinkedSub(db: AppDatabase, source: string, subject: string): Promise<string | null> {
  return createDrizzleAccountStore(db).findLinkedSub(source, subject);
}

/**
 * The local user of this upstream identity (src/accounts/ `signInFederated`): the linked one (its
 * claims refreshed where the upstream owns them), or a new federated one, every claim owned by the
 * provider and no local password.
 */
export function signInFederatedIdentity(
  db: AppDatabase,
  provider: UpstreamProvider,
  subject: string,
  claims: UpstreamClaims,
  now: number,
): Promise<string> {
  return createDrizzleAccountStore(db).signInFederated(
    sourceOf(provider),
    subject,
    mappedProfile(provider, claims),
    now,
  );
}
