import { beforeEach, describe, expect, it } from 'vitest';
import { clientCredentialsGrant } from '../src/grants/client-credentials.js';
import {
  createGrantRegistry,
  defaultGrantHandlers,
  handleTokenRequest,
  registeredGrantTypes,
  repeatableTokenParameters,
  type TokenEndpointDependencies,
  tokenEndpointParameters,
} from '../src/grants/index.js';
import type { AnyGrantHandler, GrantHandler, TokenRequest } from '../src/grants/types.js';
import type { GrantType } from '../src/model.js';
import { hashToken } from '../src/tokens/opaque.js';
import { createEnv, type Env, expectOAuthError, jwtClaims, jwtHeader } from './harness.js';

describe('client_credentials grant', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });
  const request = (clientId: string, scope?: string, resources: string[] = []) =>
    env.tokenRequest(clientId, { grant_type: 'client_credentials', scope }, { resources });

  it('issues a token for the client itself: sub = client_id, no refresh token, no ID token', async () => {
    const response = await clientCredentialsGrant.handle(await request('svc', 'orders.read'), env.context);
    expect(response).toMatchObject({ token_type: 'Bearer', expires_in: 300, scope: 'orders.read' });
    expect(response.refresh_token).toBeUndefined();
    expect(response.id_token).toBeUndefined();
    expect(jwtHeader(response.access_token).typ).toBe('at+jwt');
    const claims = jwtClaims(response.access_token);
    expect(claims).toMatchObject({ sub: 'svc', client_id: 'svc', aud: 'orders-api', scope: 'orders.read' });
    expect(claims.gid).toBeUndefined();
    expect(claims.email).toBeUndefined();
  });

  it('defaults to the client non-OIDC scopes (RFC 6749 §3.3), picking one resource deterministically', async () => {
    const response = await clientCredentialsGrant.handle(await request('svc'), env.context);
    expect(response.scope).toBe('billing.read');
    const row = await env.stores.accessTokens.findAccessToken(hashToken(response.access_token));
    expect(row).toMatchObject({ grantId: null, sub: 'svc', audience: ['billing-api'] });
  });

  it('the resource parameter picks the audience', async () => {
    const response = await clientCredentialsGrant.handle(
      await request('svc', undefined, ['orders-api']),
      env.context,
    );
    expect(response.scope).toBe('orders.read orders.write');
  });

  it.each([
    ['openid', 'openid orders.read', 'svc', 'invalid_scope'],
    ['another OIDC scope', 'offline_access', 'svc', 'invalid_scope'],
    ['a scope the client may not have', 'orders.read admin', 'svc', 'invalid_scope'],
    ['a public client', 'orders.read', 'spa', 'unauthorized_client'],
  ] as const)('rejects %s with %s', async (_name, scope, clientId, code) => {
    await expectOAuthError(clientCredentialsGrant.handle(await request(clientId, scope), env.context), code);
  });
});

describe('grant registry and handleTokenRequest', () => {
  let env: Env;
  beforeEach(async () => {
    env = await createEnv();
  });
  const registry = createGrantRegistry();

  it('registers the shipped grants', () => {
    expect([...registry.keys()]).toEqual(
      expect.arrayContaining([
        'authorization_code',
        'client_credentials',
        'refresh_token',
        'urn:ietf:params:oauth:grant-type:device_code',
      ]),
    );
    expect(registry.size).toBe(defaultGrantHandlers.length);
  });

  it.each([
    ['missing grant_type', 'svc', undefined, 'invalid_request'],
    ['an unknown grant_type', 'svc', 'urn:example:unknown', 'unsupported_grant_type'],
    ['password (never registered)', 'web', 'password', 'unsupported_grant_type'],
    ['implicit', 'web', 'implicit', 'unsupported_grant_type'],
    ['a grant the client is not allowed', 'web', 'client_credentials', 'unauthorized_client'],
    [
      'a grant this server does not offer',
      'web',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      'unsupported_grant_type',
    ],
  ] as const)('%s → %s', async (_name, clientId, grantType, code) => {
    const tokenRequest = await env.tokenRequest(clientId, { grant_type: grantType, scope: 'orders.read' });
    await expectOAuthError(handleTokenRequest(tokenRequest, env.context, registry), code);
  });

  it('dispatches to the handler', async () => {
    const tokenRequest = await env.tokenRequest('svc', {
      grant_type: 'client_credentials',
      scope: 'orders.read',
    });
    const response = await handleTokenRequest(tokenRequest, env.context, registry);
    expect(response.scope).toBe('orders.read');
  });

  it('a new grant plugs in by appending a handler', async () => {
    const device: GrantHandler<unknown> = {
      grantType: 'urn:ietf:params:oauth:grant-type:device_code',
      parameters: ['device_code'],
      handle: async () => ({ access_token: 'x', token_type: 'Bearer', expires_in: 1 }),
    };
    // The shipped device grant is swapped for the stub, as a new grant would be appended.
    const others = defaultGrantHandlers.filter((handler) => handler.grantType !== device.grantType);
    const extended = createGrantRegistry([...others, device]);
    env.stores.seed({
      clients: [
        { ...(await env.client('web')), grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] },
      ],
    });
    const tokenRequest = await env.tokenRequest('web', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    });
    await expect(handleTokenRequest(tokenRequest, env.context, extended)).resolves.toMatchObject({
      access_token: 'x',
    });
  });

  it('a test-only grant: one handler and one registry entry, and it is listed, dispatched and given only its parameters', async () => {
    const received: TokenRequest[] = [];
    const widget: GrantHandler<unknown> = {
      // Not a real grant type; the cast stands for adding its name to GRANT_TYPES (API.md).
      grantType: 'urn:example:widget' as GrantType,
      parameters: ['widget', 'resource'],
      repeatableParameters: ['widget'],
      handle: async (request) => {
        received.push(request);
        return { access_token: 'widget-token', token_type: 'Bearer', expires_in: 1 };
      },
    };
    const extended = createGrantRegistry([...defaultGrantHandlers, widget]);
    expect(registeredGrantTypes(extended)).toContain('urn:example:widget');
    expect(repeatableTokenParameters(extended)).toEqual(
      expect.arrayContaining(['widget', 'resource', 'audience']),
    );
    expect(repeatableTokenParameters(createGrantRegistry())).not.toContain('widget');
    // The token endpoint's API description lists it too (the server's OpenAPI document).
    expect(tokenEndpointParameters(extended)).toContain('widget');
    expect(tokenEndpointParameters(createGrantRegistry())).not.toContain('widget');

    env.stores.seed({
      clients: [{ ...(await env.client('svc')), grantTypes: ['urn:example:widget' as GrantType] }],
    });
    const tokenRequest = await env.tokenRequest(
      'svc',
      { grant_type: 'urn:example:widget', widget: 'w1', scope: 'admin', refresh_token: 'stolen' },
      { resources: ['orders-api'], audiences: ['someone'] },
    );
    await expect(handleTokenRequest(tokenRequest, env.context, extended)).resolves.toMatchObject({
      access_token: 'widget-token',
    });
    // Undeclared parameters (scope, refresh_token, audience) never reach the grant.
    expect(received[0]?.params).toEqual({ grant_type: 'urn:example:widget', widget: 'w1' });
    expect(received[0]?.resources).toEqual(['orders-api']);
    expect(received[0]?.audiences).toEqual([]);
  });

  it('the shipped grants see only what they declare (an extra code on client_credentials is dropped)', async () => {
    const seen: TokenRequest[] = [];
    const spying = defaultGrantHandlers.map((handler) =>
      handler.grantType === 'client_credentials'
        ? {
            ...handler,
            handle: (request: TokenRequest, context: TokenEndpointDependencies) => {
              seen.push(request);
              return handler.handle(request, context);
            },
          }
        : handler,
    );
    const tokenRequest = await env.tokenRequest('svc', {
      grant_type: 'client_credentials',
      scope: 'orders.read',
      code: 'not-a-client-credentials-parameter',
    });
    await handleTokenRequest(tokenRequest, env.context, createGrantRegistry(spying));
    expect(Object.keys(seen[0]?.params ?? {}).sort()).toEqual(['grant_type', 'scope']);
  });

  it('refuses to register password, implicit or a duplicate', () => {
    const fake = (grantType: string) =>
      ({ ...clientCredentialsGrant, grantType }) as unknown as AnyGrantHandler;
    expect(() => createGrantRegistry([fake('password')])).toThrow();
    expect(() => createGrantRegistry([fake('implicit')])).toThrow();
    expect(() => createGrantRegistry([clientCredentialsGrant, clientCredentialsGrant])).toThrow();
  });
});
