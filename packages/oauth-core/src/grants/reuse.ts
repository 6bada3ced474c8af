import type { GrantStore } from '../storage/index.js';
import type { GrantEvents, GrantRevokedEvent } from './types.js';

/** What revoking the grant of a reused credential takes. */
export interface ReuseRevocationDependencies {
  stores: { grants: Pick<GrantStore, 'revokeGrant'> };
  events: GrantEvents;
}

/**
 * A single-use credential came back: revoke its whole grant (every refresh and access token of it),
 * then report the revocation through `events.grantRevoked`, so the server can audit it.
 */
export async function revokeReusedGrant(
  deps: ReuseRevocationDependencies,
  event: GrantRevokedEvent,
  at: number,
): Promise<void> {
  await deps.stores.grants.revokeGrant(event.grantId, at);
  deps.events.grantRevoked(event);
}
