import {
  asResourceChallenge,
  findActiveAccessToken,
  invalidToken,
  isOAuthError,
  resolveUserInfoOfClient,
  userInfoResponse,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { presentedAccessToken } from '../../http/presented-access-token.js';

/**
 * OpenID Connect Core §5.3 UserInfo, GET and POST. The access token comes from the
 * `Authorization: Bearer` header (RFC 6750 §2.1) or, for POST, the `access_token` form parameter
 * (§2.2); never from the query string (§2.3 is discouraged and not offered). A DPoP-bound token
 * comes as `Authorization: DPoP <token>` with a `DPoP` proof that hashes it (RFC 9449 §7.1).
 */
export const userInfoRoutes: FastifyPluginAsync = async (app) => {
  const { stores, verifier, signer, clock, config } = app.protocol;
  const context = { stores, verifier, clock, config };

  // OpenID Connect Core §5.3.2: JSON, or a signed JWT for a client that registered
  // `userinfo_signed_response_alg`.
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    const userInfo = await resolveForRequest(request);
    const client = await stores.clients.findClient(userInfo.clientId);
    const response = await userInfoResponse(userInfo, client, { signer, config });
    if (response.contentType === 'application/json') return response.body;
    return reply.type(response.contentType).send(response.body);
  };

  const resolveForRequest = async (request: FastifyRequest) => {
    const credentials = presentedAccessToken(request, { formParameter: true, realm: 'userinfo' });
    if (credentials.scheme === 'Bearer') return resolveUserInfoOfClient(credentials.token, context);
    try {
      return await dpopUserInfo(request, credentials.token);
    } catch (error) {
      // RFC 9449 §7.1: errors of a DPoP request are answered with a DPoP challenge.
      throw isOAuthError(error) ? asResourceChallenge(error) : error;
    }
  };

  async function dpopUserInfo(request: FastifyRequest, accessToken: string) {
    // The token's client decides whether its proofs need a server nonce (RFC 9449 §9).
    const active = await findActiveAccessToken(accessToken, context);
    if (active === null) throw invalidToken('unknown, expired or revoked access token');
    // The DPoP scheme is for DPoP-bound tokens; a bearer token is sent as one.
    if (active.dpopJkt === null) throw invalidToken('DPoP scheme with a token that is not DPoP-bound');
    const client = await stores.clients.findClient(active.clientId);
    const dpopJkt = await app.dpop.verifyResourceRequest(request, {
      path: ENDPOINTS.userinfo.path,
      accessToken,
      nonceRequired: client?.dpopNonceRequired === true,
    });
    // resolveUserInfo compares the proof's key with the token's cnf.jkt (RFC 9449 §7.1).
    return resolveUserInfoOfClient(accessToken, context, { dpopJkt });
  }

  // RFC 6750 §3 challenges; POST takes a form only when it carries the token (§2.2).
  const options = {
    onRequest: app.browserCors,
    config: { errorStyle: 'bearer', formBody: 'when-present' },
  } as const;
  app.get(ENDPOINTS.userinfo.path, options, handler);
  app.post(ENDPOINTS.userinfo.path, options, handler);
};
