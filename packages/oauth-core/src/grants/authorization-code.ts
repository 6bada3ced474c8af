import { invalidGrant, invalidRequest } from '../errors.js';
import { GRANT_TYPES } from '../model.js';
import { isValidCodeVerifier, verifyPkceS256 } from '../pkce.js';
import type { ProtocolStores } from '../storage/index.js';
import { hashToken } from '../tokens/opaque.js';
import { prepareRedemptionTokens } from './issue-tokens.js';
import { commitCodeRedemption, findAuthorizationCodeWithGrantAndUser } from './redemption.js';
import { revokeReusedGrant } from './reuse.js';
import type { GrantEvents, GrantHandler, MintingDependencies } from './types.js';

/** What the authorization code grant uses. */
export interface AuthorizationCodeGrantDependencies extends MintingDependencies {
  stores: Pick<ProtocolStores, 'codes' | 'grants' | 'users' | 'resources' | 'transaction'>;
  /** `grantRevoked` when a code presented again revokes its grant. */
  events: GrantEvents;
}

/**
 * RFC 6749 §4.1.3 with PKCE (RFC 7636) and the RFC 9700 rules. Everything is checked before the
 * code is consumed, so a failed check (a wrong `code_verifier` in particular) leaves the code
 * usable; only the single winner of the conditional consume step (`consumeAuthorizationCode`, or
 * the store's `redeemAuthorizationCode`) issues tokens.
 */
export const authorizationCodeGrant = {
  grantType: GRANT_TYPES.authorizationCode,
  parameters: ['code', 'redirect_uri', 'code_verifier', 'resource'],
  repeatableParameters: ['resource'],
  async handle(request, deps) {
    const { client, params } = request;
    const { stores, clock } = deps;
    const now = clock.nowSeconds();
    if (params.code === undefined || params.code === '') throw invalidRequest('code is required');
    // RFC 6749 §4.1.3: required because this server always requires it at the authorization endpoint.
    if (params.redirect_uri === undefined) throw invalidRequest('redirect_uri is required');
    const verifier = params.code_verifier;
    // RFC 7636 §4.1: 43–128 characters of the unreserved set.
    if (verifier !== undefined && !isValidCodeVerifier(verifier)) {
      throw invalidRequest('code_verifier is malformed');
    }

    const codeHash = hashToken(params.code);
    // The code, its grant and its user in one read where the store can (see grants/redemption.ts).
    const found = await findAuthorizationCodeWithGrantAndUser(stores, codeHash);
    if (found === null) throw invalidGrant('unknown authorization code');
    const { code, grant, user } = found;
    // RFC 6749 §4.1.3: the code must have been issued to the authenticated client.
    if (code.clientId !== client.clientId) throw invalidGrant('code issued to another client');
    if (code.usedAt !== null) {
      // RFC 6749 §4.1.2: "If an authorization code is used more than once, the authorization server
      // MUST deny the request and SHOULD revoke (when possible) all tokens previously issued based on
      // that authorization code."
      await revokeReusedGrant(
        deps,
        {
          reason: 'authorization_code_reused',
          grantType: GRANT_TYPES.authorizationCode,
          grantId: code.grantId,
          clientId: code.clientId,
          sub: code.sub,
        },
        now,
      );
      throw invalidGrant('authorization code reused; grant revoked');
    }
    if (code.expiresAt <= now) throw invalidGrant('authorization code expired');
    // RFC 6749 §4.1.3: redirect_uri must be identical to the one of the authorization request.
    if (params.redirect_uri !== code.redirectUri) throw invalidGrant('redirect_uri mismatch');
    if (code.codeChallenge !== null) {
      // RFC 7636 §4.6: the verifier is required and must match the challenge.
      if (verifier === undefined) throw invalidGrant('code_verifier missing');
      if (!verifyPkceS256(verifier, code.codeChallenge)) throw invalidGrant('PKCE verification failed');
    } else {
      // RFC 9700 §2.1.1: "ensure that if there was no code_challenge in the authorization request, a
      // request to the token endpoint containing a code_verifier is rejected" (downgrade attack).
      if (verifier !== undefined) throw invalidGrant('code_verifier sent for a code without PKCE');
      // Public clients always use PKCE (checked at authorization; defence in depth).
      if (!request.clientAuthenticated) throw invalidGrant('public client code without PKCE');
    }

    // RFC 9449 §10: a code bound with `dpop_jkt` (or a DPoP proof at PAR) is redeemed only with a
    // proof by that key.
    if (code.dpopJkt != null && request.dpopJkt !== code.dpopJkt) {
      throw invalidGrant('the DPoP proof is not by the key the code is bound to');
    }
    if (grant === null || grant.revokedAt !== null) throw invalidGrant('grant revoked');
    if (user === null) throw invalidGrant('user no longer exists');
    // Mint first (no writes), then consume the code and store the tokens in one atomic unit: the
    // race-critical step is the store's conditional update, so it holds across processes.
    const { response, records } = await prepareRedemptionTokens(
      request,
      { user, grant, scopes: code.scopes, resources: code.resources, nonce: code.nonce },
      deps,
    );
    const won = await commitCodeRedemption(stores, codeHash, now, records);
    // Lost the race to a concurrent redemption of the same code. The next presentation of the code
    // sees it used and revokes the grant.
    if (!won) throw invalidGrant('authorization code redeemed concurrently');
    return response;
  },
} satisfies GrantHandler<AuthorizationCodeGrantDependencies>;
