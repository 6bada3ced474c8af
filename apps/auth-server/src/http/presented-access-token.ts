import {
  authenticationChallenge,
  DPOP_SIGNING_ALGS,
  invalidRequest,
  OAuthError,
} from '@oidc-orders/oauth-core';
import type { FastifyRequest } from 'fastify';
import { readFormParameters } from './oauth-form.js';

/**
 * How a protected resource of this server (UserInfo, the admin API) reads the access token of a
 * request: `Authorization: Bearer` (RFC 6750 §2.1), `Authorization: DPoP` with a `DPoP` proof
 * (RFC 9449 §7.1), or, where the resource allows it, the `access_token` form parameter of a POST
 * (RFC 6750 §2.2); never the query string (§2.3 is discouraged and not offered).
 */
export interface PresentedToken {
  scheme: 'Bearer' | 'DPoP';
  token: string;
}

export interface PresentedTokenOptions {
  /** RFC 6750 §2.2: a POST may carry the token as the `access_token` form parameter. */
  formParameter: boolean;
  /** The `realm` of the bare challenge (RFC 6750 §3). */
  realm: string;
}

export function presentedAccessToken(
  request: FastifyRequest,
  options: PresentedTokenOptions,
): PresentedToken {
  const header = request.headers.authorization;
  const dpop = header === undefined ? undefined : /^DPoP +([\x21-\x7E]+) *$/i.exec(header)?.[1];
  if (dpop !== undefined) {
    if (formToken(request, options) !== undefined) {
      throw invalidRequest('the access token was sent in more than one way');
    }
    return { scheme: 'DPoP', token: dpop };
  }
  return { scheme: 'Bearer', token: bearerToken(request, options) };
}

function formToken(request: FastifyRequest, options: PresentedTokenOptions): string | undefined {
  if (!options.formParameter || request.method !== 'POST') return undefined;
  return readFormParameters(request.body).params.access_token;
}

function bearerToken(request: FastifyRequest, options: PresentedTokenOptions): string {
  const header = request.headers.authorization;
  const fromHeader = header === undefined ? undefined : /^Bearer +([\x21-\x7E]+) *$/i.exec(header)?.[1];
  if (header !== undefined && fromHeader === undefined && !/^(Bearer|DPoP)(\s|$)/i.test(header)) {
    // Another scheme (Basic…) is no access token at all.
    throw missingAccessToken(options.realm);
  }
  if (header !== undefined && fromHeader === undefined)
    throw invalidRequest('malformed authorization header');
  const fromBody = formToken(request, options);
  // RFC 6750 §2: "Clients MUST NOT use more than one method to transmit the token in each request."
  if (fromHeader !== undefined && fromBody !== undefined) {
    throw invalidRequest('the access token was sent in more than one way');
  }
  const token = fromHeader ?? fromBody;
  if (token === undefined) throw missingAccessToken(options.realm);
  return token;
}

/** RFC 6750 §3.1: a request without any authentication gets a bare challenge, no error code. */
export function missingAccessToken(realm: string): OAuthError {
  return new OAuthError('invalid_token', {
    description: 'an access token is required',
    detail: 'no bearer token',
    status: 401,
    // RFC 9449 §7.1: a resource accepting both schemes challenges with both.
    headers: {
      'WWW-Authenticate': `${authenticationChallenge('Bearer', [['realm', realm]])}, ${authenticationChallenge('DPoP', [['algs', DPOP_SIGNING_ALGS.join(' ')]])}`,
    },
  });
}
