import {
  accessDenied,
  authorizationPending,
  expiredToken,
  invalidGrant,
  invalidRequest,
  slowDown,
} from '../errors.js';
import { GRANT_TYPES } from '../model.js';
import type { ProtocolStores } from '../storage/index.js';
import { hashToken } from '../tokens/opaque.js';
import { prepareRedemptionTokens } from './issue-tokens.js';
import { revokeReusedGrant } from './reuse.js';
import type { GrantEvents, GrantHandler, MintingDependencies } from './types.js';

/** What the device code grant uses. */
export interface DeviceCodeGrantDependencies extends MintingDependencies {
  stores: Pick<ProtocolStores, 'deviceCodes' | 'grants' | 'users' | 'resources' | 'transaction'>;
  /** `grantRevoked` when a redeemed device code polled again revokes its grant. */
  events: GrantEvents;
}

/** RFC 8628 §3.5: "the interval MUST be increased by 5 seconds for this and all subsequent requests." */
export const SLOW_DOWN_INCREMENT = 5;

/**
 * RFC 8628 §3.4–3.5, the device access token request. The answer depends on the code's state:
 * - redeemed → `invalid_grant`, and the grant is revoked (a device code is single-use, like an
 *   authorization code: RFC 6749 §4.1.2 applied to its twin);
 * - denied → `access_denied`; past `expires_in` → `expired_token`;
 * - pending → `slow_down` (interval +5 s) when polled sooner than the interval since the previous
 *   poll, else `authorization_pending`;
 * - approved → tokens, issued only by the single winner of the conditional approved → redeemed
 *   update, in the same transaction; a concurrent loser gets `invalid_grant` without revoking.
 * The grant was created at approval (sub, scopes, resources, sid, auth_time), so refresh tokens,
 * reuse detection and revocation work by grant as for the authorization code grant.
 */
export const deviceCodeGrant = {
  grantType: GRANT_TYPES.deviceCode,
  parameters: ['device_code', 'resource'],
  repeatableParameters: ['resource'],
  async handle(request, deps) {
    const { client, params } = request;
    const { stores, clock } = deps;
    const now = clock.nowSeconds();
    if (params.device_code === undefined || params.device_code === '') {
      throw invalidRequest('device_code is required');
    }

    const deviceCodeHash = hashToken(params.device_code);
    const code = await stores.deviceCodes.findDeviceCode(deviceCodeHash);
    if (code === null) throw invalidGrant('unknown device code');
    // RFC 8628 §3.4 / RFC 6749 §5.2: the code must have been issued to the authenticated client.
    if (code.clientId !== client.clientId) throw invalidGrant('device code issued to another client');
    if (code.status === 'redeemed') {
      // Approval set the grant and its user together (`approveDeviceCode`).
      if (code.grantId !== null && code.sub !== null) {
        await revokeReusedGrant(
          deps,
          {
            reason: 'device_code_reused',
            grantType: GRANT_TYPES.deviceCode,
            grantId: code.grantId,
            clientId: code.clientId,
            sub: code.sub,
          },
          now,
        );
      }
      throw invalidGrant('device code reused; grant revoked');
    }
    // RFC 8628 §3.5 access_denied: "The authorization request was denied."
    if (code.status === 'denied') throw accessDenied('the user denied the authorization request');
    // RFC 8628 §3.5 expired_token: the device must start a new device authorization.
    if (code.expiresAt <= now) throw expiredToken(`device code ${code.status}, expired`);

    if (code.status === 'pending') {
      const poll = await stores.deviceCodes.recordDeviceCodePoll(deviceCodeHash, now);
      if (poll === null) throw invalidGrant('device code vanished');
      if (poll.previousPollAt !== null && now - poll.previousPollAt < poll.interval) {
        await stores.deviceCodes.increaseDeviceCodeInterval(deviceCodeHash, SLOW_DOWN_INCREMENT);
        throw slowDown(poll.interval + SLOW_DOWN_INCREMENT);
      }
      throw authorizationPending();
    }

    // Approved: the grant and user must still be there.
    if (code.grantId === null || code.sub === null) throw invalidGrant('approved code without a grant');
    const grant = await stores.grants.findGrant(code.grantId);
    if (grant === null || grant.revokedAt !== null) throw invalidGrant('grant revoked');
    const user = await stores.users.findUserBySub(code.sub);
    if (user === null) throw invalidGrant('user no longer exists');
    // Signed before the transaction, as the code and refresh grants do: no transaction stays open
    // while tokens are signed; the records are written only if this poll wins the redemption.
    const { response, records } = await prepareRedemptionTokens(
      request,
      { user, grant, scopes: grant.scopes, resources: grant.resources, nonce: null },
      deps,
    );
    const redeemed = await stores.transaction(async (tx) => {
      // The race-critical step: approved → redeemed, one conditional update across processes.
      if (!(await tx.deviceCodes.redeemDeviceCode(deviceCodeHash, now))) return false;
      if (records.accessToken !== null) await tx.accessTokens.createAccessToken(records.accessToken);
      if (records.refreshToken !== null) await tx.refreshTokens.createRefreshToken(records.refreshToken);
      return true;
    });
    // Lost the race to a concurrent poll of the same approved code; its tokens stay valid.
    if (!redeemed) throw invalidGrant('device code redeemed concurrently');
    return response;
  },
} satisfies GrantHandler<DeviceCodeGrantDependencies>;
