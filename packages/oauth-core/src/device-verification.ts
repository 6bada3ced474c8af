import { accessDenied } from './errors.js';
import { generateUuid } from './ids.js';
import { type AuthorizationSubject, type Client, type DeviceCode, GRANT_TYPES } from './model.js';
import type { Clock, RandomSource } from './runtime.js';
import { grantableScopes } from './scopes.js';
import type { ProtocolStores } from './storage/index.js';
import { hashToken } from './tokens/opaque.js';
import { normalizeUserCode } from './user-code.js';

/**
 * The user's side of the device flow (RFC 8628 §3.3): find the authorization a typed user code
 * names, then approve it (creating the Grant) or deny it.
 */

/** What a user code (or a device code hash carried by an interaction) leads to. */
export type DeviceAuthorizationLookup =
  | { readonly status: 'pending'; readonly deviceCode: DeviceCode; readonly client: Client }
  /** Malformed, unknown, or its client is gone or no longer allowed the device grant. */
  | { readonly status: 'invalid' }
  | { readonly status: 'expired' }
  /** Already approved, denied or redeemed: a user code works once. */
  | { readonly status: 'used' };

export interface DeviceVerificationContext {
  stores: ProtocolStores;
  clock: Clock;
}

/** Looks up the device authorization of a user code as typed (any case, with or without the dash). */
export async function findDeviceAuthorizationByUserCode(
  typed: string,
  context: DeviceVerificationContext,
): Promise<DeviceAuthorizationLookup> {
  const normalized = normalizeUserCode(typed);
  if (normalized === null) return { status: 'invalid' };
  const deviceCode = await context.stores.deviceCodes.findDeviceCodeByUserCode(hashToken(normalized));
  return classify(deviceCode, context);
}

/** The same, by device-code hash (every later step of the verification re-checks the code). */
export async function findDeviceAuthorization(
  deviceCodeHash: string,
  context: DeviceVerificationContext,
): Promise<DeviceAuthorizationLookup> {
  return classify(await context.stores.deviceCodes.findDeviceCode(deviceCodeHash), context);
}

async function classify(
  deviceCode: DeviceCode | null,
  context: DeviceVerificationContext,
): Promise<DeviceAuthorizationLookup> {
  if (deviceCode === null) return { status: 'invalid' };
  if (deviceCode.status !== 'pending') return { status: 'used' };
  if (deviceCode.expiresAt <= context.clock.nowSeconds()) return { status: 'expired' };
  const client = await context.stores.clients.findClient(deviceCode.clientId);
  // The client was removed or lost the grant since the code was issued: nothing to approve.
  if (client === null || !client.grantTypes.includes(GRANT_TYPES.deviceCode)) return { status: 'invalid' };
  return { status: 'pending', deviceCode, client };
}

export interface DeviceApprovalContext extends DeviceVerificationContext {
  random: RandomSource;
}

/**
 * Approves a pending device authorization: creates the Grant (sub, scopes, resources, sid,
 * auth_time) and moves the code pending → approved in one transaction. Returns the grant, or
 * `null` when the code was no longer pending and unexpired (decided in another tab, or expired
 * while the consent page was open): nothing is written then. Throws `access_denied` when none of
 * the requested scopes can be granted to this user.
 */
export async function approveDeviceAuthorization(
  pending: { deviceCode: DeviceCode; client: Client },
  subject: AuthorizationSubject,
  context: DeviceApprovalContext,
): Promise<{ grantId: string; scopes: string[] } | null> {
  const { deviceCode, client } = pending;
  const { stores, clock, random } = context;
  let scopes: string[];
  if (subject.scopes === undefined) {
    const user = await stores.users.findUserBySub(subject.sub);
    if (user === null) throw accessDenied('the user cannot be authorized', 'unknown sub');
    scopes = grantableScopes(deviceCode.scopes, client, user);
  } else {
    // Consent may narrow the request, never widen it.
    scopes = grantableScopes(deviceCode.scopes, client, null).filter((scope) =>
      subject.scopes!.includes(scope),
    );
  }
  if (scopes.length === 0) throw accessDenied('none of the requested scopes can be granted', 'empty grant');

  const now = clock.nowSeconds();
  const grantId = generateUuid(random);
  return stores.transaction(async (tx) => {
    // The race-critical step first: a conditional update, so two approvals cannot both win.
    if (
      !(await tx.deviceCodes.approveDeviceCode(deviceCode.deviceCodeHash, {
        grantId,
        sub: subject.sub,
        at: now,
      }))
    ) {
      return null;
    }
    await tx.grants.createGrant({
      id: grantId,
      clientId: client.clientId,
      sub: subject.sub,
      scopes,
      resources: [...deviceCode.resources],
      sid: subject.sid,
      authTime: subject.authTime,
      amr: subject.amr ?? null,
      acr: subject.acr ?? null,
      createdAt: now,
      revokedAt: null,
    });
    return { grantId, scopes };
  });
}

/**
 * Denies a pending device authorization (the device's next poll gets `access_denied`, RFC 8628
 * §3.5). `false` when it was no longer pending and unexpired.
 */
export async function denyDeviceAuthorization(
  deviceCodeHash: string,
  sub: string | null,
  context: DeviceVerificationContext,
): Promise<boolean> {
  return context.stores.deviceCodes.denyDeviceCode(deviceCodeHash, { sub, at: context.clock.nowSeconds() });
}
