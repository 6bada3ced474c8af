import {
  asResourceChallenge,
  authenticationChallenge,
  DPOP_SIGNING_ALGS,
  findActiveAccessToken,
  invalidRequest,
  invalidToken,
  isOAuthError,
  OAuthError,
  resolveUserInfoOfClient,
  userInfoResponse,
} from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { ENDPOINTS } from '../../endpoints.js';
import { readFormParameters } from '../../http/oauth-form.js';
import { bearerChallenge } from '../../plugins/error-handler.js';

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
    const credentials = accessTokenOf(request);
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

/** The access token and how it was presented. */
interface PresentedToken {
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

function accessTokenOf(request: FastifyRequest): PresentedToken {
  const header = request.headers.authorization;
  const dpop = header === undefined ? undefined : /^DPoP +([\x21-\x7E]+) *$/i.exec(header)?.[1];
  if (dpop !== undefined) {
    if (request.method === 'POST' && readFormParameters(request.body).params.access_token !== undefined) {
      throw invalidRequest('the access token was sent in more than one way');
    }
    return { scheme: 'DPoP', token: dpop };
  }
  return { scheme: 'Bearer', token: bearerToken(request) };
}

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const fromHeader = header === undefined ? undefined : /^Bearer +([\x21-\x7E]+) *$/i.exec(header)?.[1];
  if (header !== undefined && fromHeader === undefined && !/^(Bearer|DPoP)(\s|$)/i.test(header)) {
    // Another scheme (Basic…) is no access token at all.
    throw missingToken();
  }
  if (header !== undefined && fromHeader === undefined)
    throw invalidRequest('malformed authorization header');
  const fromBody =
    request.method === 'POST' ? readFormParameters(request.body).params.access_token : undefined;
  // RFC 6750 §2: "Clients MUST NOT use more than one method to transmit the token in each request."
  if (fromHeader !== undefined && fromBody !== undefined) {
    throw invalidRequest('the access token was sent in more than one way');
  }
  const token = fromHeader ?? fromBody;
  if (token === undefined) throw missingToken();
  return token;
}

/** RFC 6750 §3.1: a request without any authentication gets a bare challenge, no error code. */
function missingToken(): OAuthError {
  return new OAuthError('invalid_token', {
    description: 'an access token is required',
    detail: 'no bearer token',
    status: 401,
    // RFC 9449 §7.1: a resource accepting both schemes challenges with both.
    headers: {
      'WWW-Authenticate': `${bearerChallenge()}, ${authenticationChallenge('DPoP', [['algs', DPOP_SIGNING_ALGS.join(' ')]])}`,
    },
  });
}
