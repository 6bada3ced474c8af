import * as oidc from 'openid-client';
import type { AppDatabase } from '../db/client.js';
import { recordStartedAuthorization, type StartedAuthorization } from './authorizations.js';
import type { UpstreamProvider } from './registry.js';
import type { UpstreamClients } from './upstream-client.js';

/** What the start of a code flow at an upstream provider needs (sign-in and account link alike). */
export interface UpstreamCodeFlowDeps {
  db: AppDatabase;
  clients: UpstreamClients;
  nowSeconds(): number;
}

/** The binding a started authorization carries besides its provider and its own secrets. */
export type StartedAuthorizationBinding = Omit<StartedAuthorization, 'providerId' | 'codeVerifier' | 'nonce'>;

export type UpstreamTokens = Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;

/**
 * Starts an authorization code flow at `provider`: a PKCE S256 verifier (RFC 7636 §4.1–4.2),
 * `state` and `nonce` (OIDC Core §3.1.2.1), recorded with `binding` in the database (so any
 * instance finishes it, once), and the provider's authorization URL to send the browser to.
 * Throws when the provider's discovery fails (classify with `classifyUpstreamFailure`).
 */
export async function startUpstreamAuthorization(
  deps: UpstreamCodeFlowDeps,
  provider: UpstreamProvider,
  redirectUri: string,
  binding: StartedAuthorizationBinding,
): Promise<URL> {
  const configuration = await deps.clients.configurationOf(provider);
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const codeVerifier = oidc.randomPKCECodeVerifier();
  await recordStartedAuthorization(
    deps.db,
    state,
    { ...binding, providerId: provider.id, codeVerifier, nonce },
    deps.nowSeconds(),
  );
  return oidc.buildAuthorizationUrl(configuration, {
    redirect_uri: redirectUri,
    scope: provider.scope,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
  });
}

/**
 * Redeems the callback's code of a started authorization and returns the tokens and the upstream's
 * claims. openid-client checks `state`, the RFC 9207 `iss` (required when the provider advertises
 * `authorization_response_iss_parameter_supported`), PKCE, and the ID token's signature, `iss`,
 * `aud`, `azp`, `exp`, `iat` and `nonce` (OIDC Core §3.1.3.7). Throws on any failure.
 */
export async function redeemUpstreamCode(
  clients: UpstreamClients,
  provider: UpstreamProvider,
  redirectUri: string,
  callbackQuery: Record<string, string>,
  started: Pick<StartedAuthorization, 'codeVerifier' | 'nonce'> & { state: string },
): Promise<{ tokens: UpstreamTokens; claims: Record<string, unknown> }> {
  const configuration = await clients.configurationOf(provider);
  const currentUrl = new URL(`${redirectUri}?${new URLSearchParams(callbackQuery).toString()}`);
  const tokens = await oidc.authorizationCodeGrant(configuration, currentUrl, {
    pkceCodeVerifier: started.codeVerifier,
    expectedState: started.state,
    expectedNonce: started.nonce,
    idTokenExpected: true,
  });
  return { tokens, claims: await upstreamClaims(configuration, tokens) };
}

/**
 * The ID token's claims, completed by the UserInfo response when the provider has that endpoint
 * (many providers put profile claims only there, OIDC Core §5.4). openid-client checks that the
 * UserInfo `sub` is the ID token's (§5.3.2). The `email` / `email_verified` pair is taken from one
 * source only, so a verification never applies to an address from the other response.
 */
async function upstreamClaims(
  configuration: oidc.Configuration,
  tokens: UpstreamTokens,
): Promise<Record<string, unknown>> {
  const idToken: Record<string, unknown> = { ...(tokens.claims() ?? {}) };
  if (configuration.serverMetadata().userinfo_endpoint === undefined) return idToken;
  const userInfo: Record<string, unknown> = {
    ...(await oidc.fetchUserInfo(configuration, tokens.access_token, String(idToken.sub))),
  };
  const emailSource = idToken.email !== undefined ? idToken : userInfo;
  return {
    ...userInfo,
    ...idToken,
    email: emailSource.email,
    email_verified: emailSource.email_verified,
  };
}
