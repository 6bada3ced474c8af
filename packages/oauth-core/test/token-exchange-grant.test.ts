import { beforeEach, describe, expect, it } from 'vitest';
import { ACR_VALUES } from '../src/authentication-level.js';
import { authorizationCodeGrant } from '../src/grants/authorization-code.js';
import { clientCredentialsGrant } from '../src/grants/client-credentials.js';
import {
  createGrantRegistry,
  handleTokenRequest,
  type TokenEndpointDependencies,
} from '../src/grants/index.js';
import { tokenExchangeGrant } from '../src/grants/token-exchange.js';
import type { TokenRequest } from '../src/grants/types.js';
import { TOKEN_TYPES } from '../src/model.js';
import { issueIdToken } from '../src/tokens/id-token.js';
import { hashToken } from '../src/tokens/opaque.js';
import { findActiveAccessToken } from '../src/tokens/validate-access-token.js';
import { billingResource, makeClient } from './fixtures.js';
import { createEnv, type Env, expectOAuthError, jwtClaims, obtainTokens, VERIFIER } from './harness.js';

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange' as const;
const ACCESS = TOKEN_TYPES.accessToken;
const ID = TOKEN_TYPES.idToken;

/** `gateway` may obtain orders-api and billing-api tokens; `narrow` only orders-api, access tokens only. */
function seedExchangers(env: Env) {
  env.stores.seed({
    clients: [
      makeClient({
        clientId: 'gateway',
        secretHash: env.secrets.hash('gateway-secret'),
        grantTypes: ['authorization_code', 'refresh_token', EXCHANGE],
        tokenExchange: {
          audiences: ['orders-api', 'billing-api'],
          scopes: ['openid', 'orders.read', 'billing.read'],
          subjectTokenTypes: [ACCESS, ID],
        },
      }),
      makeClient({
        clientId: 'narrow',
        secretHash: env.secrets.hash('narrow-secret'),
        grantTypes: [EXCHANGE],
        tokenExchange: { audiences: ['orders-api'], scopes: ['orders.read'], subjectTokenTypes: [ACCESS] },
      }),
    ],
  });
}

describe('token exchange grant (RFC 8693)', () => {
  let env: Env;
  let context: TokenEndpointDependencies;
  beforeEach(async () => {
    env = await createEnv();
    seedExchangers(env);
    context = { ...env.context, verifier: env.keys.verifier };
  });

  const exchange = async (
    clientId: string,
    params: Record<string, string | undefined>,
    extra: Partial<TokenRequest> = {},
  ) =>
    tokenExchangeGrant.handle(
      await env.tokenRequest(clientId, { grant_type: EXCHANGE, ...params }, extra),
      context,
    );

  /** A user's access token for orders-api with `openid profile email orders.read` (the web client's). */
  async function userToken() {
    const { response, grantId } = await obtainTokens(env);
    return { token: response.access_token, idToken: response.id_token!, grantId };
  }

  async function serviceToken(): Promise<string> {
    const request = await env.tokenRequest('svc', { grant_type: 'client_credentials', scope: 'orders.read' });
    return (await clientCredentialsGrant.handle(request, context)).access_token;
  }

  describe('allowed', () => {
    it('issues an access token for the named audience, about the subject, for the requesting client', async () => {
      const { token, grantId } = await userToken();
      const response = await exchange('gateway', {
        subject_token: token,
        subject_token_type: ACCESS,
        audience: 'orders-api',
        scope: 'orders.read',
      });
      expect(response).toMatchObject({
        issued_token_type: ACCESS,
        token_type: 'Bearer',
        scope: 'orders.read',
        expires_in: 300,
      });
      expect(response.refresh_token).toBeUndefined();
      const claims = jwtClaims(response.access_token);
      expect(claims).toMatchObject({ sub: 'u-alice', client_id: 'gateway', aud: 'orders-api', gid: grantId });
      expect(claims.act).toBeUndefined();
    });

    it('defaults the scope to what both the subject token and the policy allow', async () => {
      const { token } = await userToken();
      const response = await exchange('gateway', { subject_token: token, subject_token_type: ACCESS });
      expect(response.scope).toBe('openid orders.read');
      expect(jwtClaims(response.access_token).aud).toBe('orders-api');
    });

    it('accepts `resource` like `audience`, and the same value in both', async () => {
      const { token } = await userToken();
      const response = await exchange(
        'gateway',
        { subject_token: token, subject_token_type: ACCESS, audience: 'orders-api' },
        { resources: ['orders-api'] },
      );
      expect(jwtClaims(response.access_token).aud).toBe('orders-api');
    });

    it('carries only the OIDC scopes of the subject to an audience that owns none of its scopes', async () => {
      const { token } = await userToken();
      const response = await exchange('gateway', {
        subject_token: token,
        subject_token_type: ACCESS,
        audience: 'billing-api',
      });
      expect(response.scope).toBe('openid');
      // billing-api tokens are opaque: the row keeps the grant, so revoking it revokes this token too.
      const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
      expect(row).toMatchObject({ audience: ['billing-api'], clientId: 'gateway', sub: 'u-alice' });
    });

    it('records delegation in `act`, nesting the chain of a subject that already carries one', async () => {
      const { token } = await userToken();
      const first = await exchange('gateway', {
        subject_token: token,
        subject_token_type: ACCESS,
        actor_token: await serviceToken(),
        actor_token_type: ACCESS,
        scope: 'orders.read',
      });
      expect(jwtClaims(first.access_token).act).toEqual({ sub: 'svc' });

      const actorIdToken = (await obtainTokens(env, { clientId: 'gateway' })).response.id_token!;
      const second = await exchange('gateway', {
        subject_token: first.access_token,
        subject_token_type: ACCESS,
        actor_token: actorIdToken,
        actor_token_type: ID,
      });
      expect(jwtClaims(second.access_token).act).toEqual({ sub: 'u-alice', act: { sub: 'svc' } });
      // Without an actor the chain stays: a delegated token never becomes an impersonation.
      const third = await exchange('gateway', {
        subject_token: second.access_token,
        subject_token_type: ACCESS,
      });
      expect(jwtClaims(third.access_token).act).toEqual({ sub: 'u-alice', act: { sub: 'svc' } });
    });

    it('keeps act on opaque tokens for introspection', async () => {
      const { token } = await userToken();
      const response = await exchange('gateway', {
        subject_token: token,
        subject_token_type: ACCESS,
        audience: 'billing-api',
        actor_token: await serviceToken(),
        actor_token_type: ACCESS,
      });
      const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
      expect(row?.claims.act).toEqual({ sub: 'svc' });
    });

    it('accepts an ID token issued to the requesting client when the policy allows ID tokens', async () => {
      const { response: issued } = await obtainTokens(env, { clientId: 'gateway' });
      const response = await exchange('gateway', {
        subject_token: issued.id_token!,
        subject_token_type: ID,
        scope: 'orders.read',
      });
      expect(jwtClaims(response.access_token)).toMatchObject({
        sub: 'u-alice',
        aud: 'orders-api',
        scope: 'orders.read',
      });
    });

    it('binds the result to the DPoP key of the request, and needs that key for a bound subject', async () => {
      const { response: bound } = await obtainTokens(env, { dpopJkt: 'jkt-1' });
      await expectOAuthError(
        exchange('gateway', { subject_token: bound.access_token, subject_token_type: ACCESS }),
        'invalid_request',
      );
      const response = await exchange(
        'gateway',
        { subject_token: bound.access_token, subject_token_type: ACCESS },
        { dpopJkt: 'jkt-1' },
      );
      expect(response.token_type).toBe('DPoP');
      expect(jwtClaims(response.access_token).cnf).toEqual({ jkt: 'jkt-1' });
    });

    it('is dispatched by the default registry', async () => {
      const { token } = await userToken();
      const request = await env.tokenRequest('gateway', {
        grant_type: EXCHANGE,
        subject_token: token,
        subject_token_type: ACCESS,
      });
      const response = await handleTokenRequest(request, context, createGrantRegistry());
      expect(response.issued_token_type).toBe(ACCESS);
    });
  });

  describe('denied', () => {
    it('refuses an audience outside the policy (or unknown) with invalid_target', async () => {
      const { token } = await userToken();
      await expectOAuthError(
        exchange('narrow', { subject_token: token, subject_token_type: ACCESS, audience: 'billing-api' }),
        'invalid_target',
      );
      await expectOAuthError(
        exchange('gateway', { subject_token: token, subject_token_type: ACCESS, audience: 'nope-api' }),
        'invalid_target',
      );
      await expectOAuthError(
        exchange(
          'gateway',
          { subject_token: token, subject_token_type: ACCESS, audience: 'orders-api' },
          { resources: ['billing-api'] },
        ),
        'invalid_target',
      );
    });

    it('refuses a scope wider than the subject token, or than the policy, with invalid_scope', async () => {
      const { token } = await userToken();
      // billing.read: in the policy, not in the subject token.
      await expectOAuthError(
        exchange('gateway', { subject_token: token, subject_token_type: ACCESS, scope: 'billing.read' }),
        'invalid_scope',
      );
      // profile: in the subject token, not in the policy.
      await expectOAuthError(
        exchange('gateway', { subject_token: token, subject_token_type: ACCESS, scope: 'openid profile' }),
        'invalid_scope',
      );
    });

    it.each([
      ['a missing subject_token_type', { subject_token: 'x' }],
      ['a malformed subject token', { subject_token: 'not-a-token', subject_token_type: ACCESS }],
      [
        'a subject token of an unsupported type',
        { subject_token: 'x', subject_token_type: TOKEN_TYPES.refreshToken },
      ],
      [
        'an actor_token without its type',
        { subject_token: 'x', subject_token_type: ACCESS, actor_token: 'y' },
      ],
      [
        'a requested refresh token',
        { subject_token: 'x', subject_token_type: ACCESS, requested_token_type: TOKEN_TYPES.refreshToken },
      ],
    ])('refuses %s with invalid_request', async (_name, params) => {
      await expectOAuthError(exchange('gateway', params), 'invalid_request');
    });

    it('refuses expired and revoked subject tokens with invalid_request (RFC 8693 §2.2.2)', async () => {
      const { token, grantId } = await userToken();
      env.clock.advance(301);
      await expectOAuthError(
        exchange('gateway', { subject_token: token, subject_token_type: ACCESS }),
        'invalid_request',
      );
      const fresh = await userToken();
      await env.stores.grants.revokeGrant(fresh.grantId, env.clock.nowSeconds());
      await expectOAuthError(
        exchange('gateway', { subject_token: fresh.token, subject_token_type: ACCESS }),
        'invalid_request',
      );
      expect(grantId).not.toBe(fresh.grantId);
    });

    it('refuses ID tokens when the policy does not name them, and ID tokens of another client', async () => {
      const { idToken } = await userToken();
      await expectOAuthError(
        exchange('narrow', { subject_token: idToken, subject_token_type: ID }),
        'invalid_request',
      );
      // web's ID token presented by gateway.
      await expectOAuthError(
        exchange('gateway', { subject_token: idToken, subject_token_type: ID }),
        'invalid_request',
      );
    });

    it('refuses an invalid actor token with invalid_request', async () => {
      const { token } = await userToken();
      await expectOAuthError(
        exchange('gateway', {
          subject_token: token,
          subject_token_type: ACCESS,
          actor_token: 'bogus',
          actor_token_type: ACCESS,
        }),
        'invalid_request',
      );
    });

    it('refuses clients without a policy, and public clients, with unauthorized_client', async () => {
      const { token } = await userToken();
      await expectOAuthError(
        exchange('web', { subject_token: token, subject_token_type: ACCESS }),
        'unauthorized_client',
      );
      await expectOAuthError(
        exchange(
          'gateway',
          { subject_token: token, subject_token_type: ACCESS },
          { clientAuthenticated: false },
        ),
        'unauthorized_client',
      );
    });
  });

  describe('a resource with require_mfa (its tokens only from a sign-in that met the level)', () => {
    beforeEach(() => {
      env.stores.seed({ resources: [billingResource({ requireMfa: true })] });
    });

    /** Tokens of a code exchange whose grant records the sign-in level `acr` (`null`: none recorded). */
    async function signedInAt(acr: string | null, clientId = 'web') {
      const { code } = await env.seedCode({ code: { clientId }, grant: { acr } });
      const request = await env.tokenRequest(clientId, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'https://app.example.test/cb',
        code_verifier: VERIFIER,
      });
      return authorizationCodeGrant.handle(request, context);
    }
    const toBilling = (subjectToken: string, type: string = ACCESS) =>
      exchange('gateway', { subject_token: subjectToken, subject_token_type: type, audience: 'billing-api' });

    it('refuses a password-only subject token for it with invalid_target (RFC 8693 §2.2.2), and only for it', async () => {
      const { access_token: token } = await signedInAt(ACR_VALUES.password);
      const error = await expectOAuthError(toBilling(token), 'invalid_target');
      expect(error.description).toMatch(/multi-factor/);
      // The same token still reaches a resource without the requirement.
      await expect(
        exchange('gateway', { subject_token: token, subject_token_type: ACCESS, audience: 'orders-api' }),
      ).resolves.toMatchObject({ issued_token_type: ACCESS });
    });

    it.each([
      ['multi-factor', ACR_VALUES.mfa],
      ['phishing-resistant', ACR_VALUES.phishingResistant],
    ])('issues it from a %s sign-in', async (_level, acr) => {
      const { access_token: token } = await signedInAt(acr);
      const response = await toBilling(token);
      const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
      expect(row).toMatchObject({ audience: ['billing-api'], clientId: 'gateway', sub: 'u-alice' });
    });

    it('reads an ID token’s own acr: password refused, multi-factor accepted', async () => {
      const password = await signedInAt(ACR_VALUES.password, 'gateway');
      await expectOAuthError(toBilling(password.id_token!, ID), 'invalid_target');
      const mfa = await signedInAt(ACR_VALUES.mfa, 'gateway');
      await expect(toBilling(mfa.id_token!, ID)).resolves.toMatchObject({ issued_token_type: ACCESS });
    });

    it('refuses a token without a recorded level: a grant from before levels, or a client’s own token', async () => {
      const { access_token: unrecorded } = await signedInAt(null);
      await expectOAuthError(toBilling(unrecorded), 'invalid_target');
      await expectOAuthError(toBilling(await serviceToken()), 'invalid_target');
    });
  });

  describe('an ID token as subject: bound to the grant it was issued in', () => {
    const validation = () => ({
      stores: env.stores,
      verifier: env.keys.verifier,
      clock: env.clock,
      config: env.config,
    });
    const exchangeIdToken = (idToken: string) =>
      exchange('gateway', { subject_token: idToken, subject_token_type: ID, scope: 'orders.read' });

    it('carries the grant id (gid) in the ID token', async () => {
      const { response, grantId } = await obtainTokens(env, { clientId: 'gateway' });
      expect(jwtClaims(response.id_token!).gid).toBe(grantId);
    });

    it('ends the exchanged token with that grant, and refuses the ID token afterwards with invalid_grant', async () => {
      const { response: issued, grantId } = await obtainTokens(env, { clientId: 'gateway' });
      const exchanged = await exchangeIdToken(issued.id_token!);
      expect(jwtClaims(exchanged.access_token).gid).toBe(grantId);
      expect(await findActiveAccessToken(exchanged.access_token, validation())).not.toBeNull();
      await env.stores.grants.revokeGrant(grantId, env.clock.nowSeconds());
      expect(await findActiveAccessToken(exchanged.access_token, validation())).toBeNull();
      await expectOAuthError(exchangeIdToken(issued.id_token!), 'invalid_grant');
    });

    it('refuses an ID token without gid, and one naming another grant, with invalid_request', async () => {
      const other = await obtainTokens(env, { clientId: 'web' });
      const user = (await env.stores.users.findUserBySub('u-alice'))!;
      const client = (await env.stores.clients.findClient('gateway'))!;
      const signed = (grantId: string | null) =>
        issueIdToken({ client, user, scopes: ['openid'], grantId }, env.context);
      await expectOAuthError(exchangeIdToken(await signed(null)), 'invalid_request');
      await expectOAuthError(exchangeIdToken(await signed(other.grantId)), 'invalid_request');
    });
  });

  it('the exchanged token dies with the user’s grant', async () => {
    const { token, grantId } = await userToken();
    const response = await exchange('gateway', { subject_token: token, subject_token_type: ACCESS });
    const validation = {
      stores: env.stores,
      verifier: env.keys.verifier,
      clock: env.clock,
      config: env.config,
    };
    expect(await findActiveAccessToken(response.access_token, validation)).not.toBeNull();
    await env.stores.grants.revokeGrant(grantId, env.clock.nowSeconds());
    expect(await findActiveAccessToken(response.access_token, validation)).toBeNull();
  });
});
