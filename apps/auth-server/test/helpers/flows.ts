import { randomBytes } from 'node:crypto';
import {
  computeS256Challenge,
  issueAuthorizationCode,
  validateAuthorizationRequest,
} from '@oidc-orders/oauth-core';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { locationOf } from '../browser.js';
import type { TestApp } from './app.js';
import { basicAuthorization, FORM, form } from './app.js';
import { TEST_SECRETS, WEB_REDIRECT_URI } from './seed.js';

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: computeS256Challenge(verifier) };
}

/**
 * An authorization code for `sub`, issued by oauth-core directly with the app's own stores (what
 * /authorize does after login and consent), for tests that are about the token endpoint rather
 * than the pages.
 */
export async function issueCode(
  app: TestApp,
  options: {
    clientId: string;
    redirectUri: string;
    scope: string;
    challenge: string;
    sub?: string;
    nonce?: string;
    /** The sign-in's `acr` and `amr` (`amrOf`, `acrOf`); omitted: none recorded, a password sign-in. */
    signIn?: { acr: string; amr: readonly string[] };
  },
): Promise<string> {
  const { stores, clock, random, config } = app.protocol;
  const request = await validateAuthorizationRequest(
    {
      client_id: options.clientId,
      redirect_uri: options.redirectUri,
      response_type: 'code',
      scope: options.scope,
      code_challenge: options.challenge,
      code_challenge_method: 'S256',
      ...(options.nonce ? { nonce: options.nonce } : {}),
    },
    { clients: stores.clients, resources: stores.resources },
  );
  const { code } = await issueAuthorizationCode(
    request,
    { sub: options.sub ?? 'u-alice', sid: null, authTime: clock.nowSeconds(), ...options.signIn },
    { stores, clock, random, config },
  );
  return code;
}

/** Tokens for the confidential `web` client: code → /token. */
export async function webClientTokens(
  app: TestApp,
  scope = 'openid profile email offline_access orders.read',
  signIn?: { acr: string; amr: readonly string[] },
): Promise<Record<string, string | number>> {
  const { verifier, challenge } = pkcePair();
  const code = await issueCode(app, {
    clientId: 'web',
    redirectUri: WEB_REDIRECT_URI,
    scope,
    challenge,
    ...(signIn === undefined ? {} : { signIn }),
  });
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
    payload: form({
      grant_type: 'authorization_code',
      code,
      redirect_uri: WEB_REDIRECT_URI,
      code_verifier: verifier,
    }),
  });
  if (response.statusCode !== 200) throw new Error(`code redemption failed: ${response.body}`);
  return response.json();
}

export function refreshWithWebClient(app: TestApp, refreshToken: string) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
    payload: form({ grant_type: 'refresh_token', refresh_token: refreshToken }),
  });
}

/** A confidential client that redeems the code a sign-in redirected to it. */
export interface RedeemingClient {
  clientId: string;
  redirectUri: string;
  secret: string;
}

const WEB_CLIENT: RedeemingClient = {
  clientId: 'web',
  redirectUri: WEB_REDIRECT_URI,
  secret: TEST_SECRETS.web,
};

/**
 * The end of a sign-in through the pages: the redirect to the client carries a code, which the
 * client redeems with its PKCE verifier (RFC 6749 §4.1.3, RFC 7636 §4.5).
 */
export async function redeemRedirect(
  app: TestApp,
  response: LightMyRequestResponse,
  verifier: string,
  client: RedeemingClient = WEB_CLIENT,
): Promise<{ id_token: string; access_token: string; refresh_token?: string }> {
  const location = locationOf(response);
  expect(`${location.origin}${location.pathname}`).toBe(client.redirectUri);
  const code = location.searchParams.get('code');
  expect(code).toEqual(expect.any(String));
  const token = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization(client.clientId, client.secret) },
    payload: form({
      grant_type: 'authorization_code',
      code: code ?? '',
      redirect_uri: client.redirectUri,
      code_verifier: verifier,
    }),
  });
  expect(token.statusCode).toBe(200);
  return token.json();
}
