import { sql } from 'drizzle-orm';
import { users } from '../db/schema.js';

/**
 * Who owns each profile claim of a local user, and what a sign-in through one source may change.
 * A source is `idp:<id>` (an upstream OpenID provider), `ldap` (the directory) or `local` (the
 * person or an operator changed it here). A sign-in rewrites only the claims its source owns, so
 * an address changed on the account page is never put back by the next upstream sign-in, and a
 * linked local account keeps its own name; a claim the account lacks may be filled by the
 * upstream, which then owns it. `email` and `email_verified` go together: a verification never
 * applies to an address from another source.
 */

export type ProfileClaim = 'name' | 'email' | 'groups';
export type ClaimSources = Partial<Record<ProfileClaim, string>>;

/** The source of a claim changed here (account page, operator). */
export const LOCAL_SOURCE = 'local';

/** The profile claims as the `users` row holds them. */
export interface Profile {
  name: string | null;
  email: string | null;
  emailVerified: boolean;
  groups: string[] | null;
}

/** Safe defaults for an upstream's `groups`: at most this many names, each at most this long. */
export const MAX_GROUPS = 200;
export const MAX_GROUP_NAME_LENGTH = 256;

/**
 * An upstream's groups claim as we store it: an array of non-empty strings of at most
 * `MAX_GROUP_NAME_LENGTH` characters, each once, the first `MAX_GROUPS` kept; other entries are
 * dropped. `null` when the claim is not an array (absent: the upstream said nothing).
 */
export function boundedGroups(value: unknown): string[] | null {
  if (!Array.isArray(value)) return null;
  const names = value.filter(
    (entry): entry is string =>
      typeof entry === 'string' && entry !== '' && entry.length <= MAX_GROUP_NAME_LENGTH,
  );
  return [...new Set(names)].slice(0, MAX_GROUPS);
}

const isEmpty = (profile: Profile, claim: ProfileClaim) =>
  claim === 'groups' ? profile.groups === null || profile.groups.length === 0 : profile[claim] === null;

function claimValues(profile: Profile, claim: ProfileClaim): Partial<Profile> {
  if (claim === 'email') return { email: profile.email, emailVerified: profile.emailVerified };
  return { [claim]: profile[claim] };
}

/** A local user as a sign-in finds it. */
export interface OwnedProfile extends Profile {
  claimSources: ClaimSources;
  /**
   * Federated users created before sources were recorded: their provider owned everything then,
   * so a claim without an entry is still the signing-in provider's.
   */
  unrecordedOwnedBySource: boolean;
}

/**
 * What a sign-in through `source` writes: for each claim the source owns, the upstream's value
 * (an absent value clears it, the source keeping it); for each claim nobody owns that the
 * account lacks, the upstream's value when it has one, the source then owning it; nothing else.
 */
export function profileUpdateFrom(
  current: OwnedProfile,
  source: string,
  upstream: Profile,
): { values: Partial<Profile>; claimSources: ClaimSources } {
  const claimSources: ClaimSources = { ...current.claimSources };
  let values: Partial<Profile> = {};
  for (const claim of ['name', 'email', 'groups'] as const) {
    const owner = current.claimSources[claim] ?? (current.unrecordedOwnedBySource ? source : undefined);
    const fills = owner === undefined && isEmpty(current, claim) && !isEmpty(upstream, claim);
    if (owner === source || fills) {
      values = { ...values, ...claimValues(upstream, claim) };
      claimSources[claim] = source;
    }
  }
  return { values, claimSources };
}

/** Every claim owned by `source`: a user a sign-in through it just created. */
export const allOwnedBy = (source: string): ClaimSources => ({ name: source, email: source, groups: source });

/**
 * The `claim_sources` value after the person changed `claim` here: it is local from now on, so no
 * sign-in through an upstream or the directory's source entry puts the old value back.
 */
export const locallyOwned = (claim: ProfileClaim) =>
  sql`${users.claimSources} || jsonb_build_object(${claim}::text, ${LOCAL_SOURCE}::text)`;
