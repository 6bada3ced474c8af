import * as client from 'openid-client';

/**
 * A confidential client signing in at our server with openid-client, the way a real relying party
 * does: discovery, a code flow with PKCE S256, `state` and `nonce`, and the redemption with every
 * check openid-client makes (RFC 9207 `iss`, `state`, the ID token's signature and `nonce`).
 */
export interface RelyingPartyFlow {
  config: client.Configuration;
  authorizationUrl: URL;
  nonce: string;
  /** Redeems the code of the redirect the sign-in ended with. */
  redeem(redirect: URL): ReturnType<typeof client.authorizationCodeGrant>;
}

export async function startRelyingPartyFlow(
  issuer: string,
  registered: { clientId: string; secret: string; redirectUri: string },
  parameters: { scope: string; prompt?: string },
): Promise<RelyingPartyFlow> {
  const config = await client.discovery(new URL(issuer), registered.clientId, registered.secret, undefined, {
    // The test servers listen on plain http on loopback.
    execute: [client.allowInsecureRequests],
  });
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const authorizationUrl = client.buildAuthorizationUrl(config, {
    redirect_uri: registered.redirectUri,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...parameters,
  });
  return {
    config,
    authorizationUrl,
    nonce,
    redeem: (redirect) =>
      client.authorizationCodeGrant(config, redirect, {
        pkceCodeVerifier: verifier,
        expectedState: state,
        expectedNonce: nonce,
        idTokenExpected: true,
      }),
  };
}
