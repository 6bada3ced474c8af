import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type AuthorizationCodeGrantDependencies,
  authorizationCodeGrant,
  type ClientCredentialsGrantDependencies,
  clientCredentialsGrant,
  createGrantRegistry,
  type DeviceCodeGrantDependencies,
  deviceCodeGrant,
  type GrantRegistry,
  handleTokenRequest,
  refreshTokenGrant,
  type TokenEndpointDependencies,
  type TokenExchangeGrantDependencies,
  tokenExchangeGrant,
} from '../src/grants/index.js';
import type { GrantHandler, RegistryDependencies } from '../src/grants/types.js';
import { createEnv } from './harness.js';

/**
 * Each grant states what it uses (`GrantHandler<Deps>`), and a registry needs every `Deps` of its
 * grants at once: registering a grant whose dependency the server does not supply is a compile
 * error. The `@ts-expect-error` lines and `expectTypeOf` calls are checked by `tsc` (the package's
 * `typecheck` covers test/): if the constraint were gone, the lines below would compile and
 * `@ts-expect-error` would itself be the error.
 */
describe('grant dependencies (checked at compile time)', () => {
  it('the token exchange grant cannot be registered without a token verifier', async () => {
    const env = await createEnv();
    const { verifier: _verifier, ...withoutVerifier } = env.context;
    const registry = createGrantRegistry([tokenExchangeGrant]);
    const request = await env.tokenRequest('svc', { grant_type: 'client_credentials' });

    expectTypeOf(registry).not.toExtend<GrantRegistry<typeof withoutVerifier>>();
    expectTypeOf(withoutVerifier).not.toExtend<TokenExchangeGrantDependencies>();
    // @ts-expect-error: the token exchange grant reads subject and actor tokens with a TokenVerifier.
    const dispatch = () => handleTokenRequest(request, withoutVerifier, registry);
    expect(dispatch).toBeTypeOf('function');
  });

  it('the device grant cannot be registered without a device code store', async () => {
    const env = await createEnv();
    const { deviceCodes: _deviceCodes, ...storesWithoutDeviceCodes } = env.stores;
    const withoutDeviceCodes = { ...env.context, stores: storesWithoutDeviceCodes };
    const registry = createGrantRegistry([deviceCodeGrant]);
    const request = await env.tokenRequest('svc', { grant_type: 'client_credentials' });

    expectTypeOf(withoutDeviceCodes).not.toExtend<DeviceCodeGrantDependencies>();
    // @ts-expect-error: stores.deviceCodes is missing.
    const dispatch = () => handleTokenRequest(request, withoutDeviceCodes, registry);
    expect(dispatch).toBeTypeOf('function');
  });

  it('the code and refresh grants cannot be registered without the grantRevoked hook', async () => {
    const env = await createEnv();
    const { events: _events, ...withoutEvents } = env.context;
    const request = await env.tokenRequest('svc', { grant_type: 'client_credentials' });

    const codeRegistry = createGrantRegistry([authorizationCodeGrant]);
    const refreshRegistry = createGrantRegistry([refreshTokenGrant]);

    expectTypeOf(withoutEvents).not.toExtend<AuthorizationCodeGrantDependencies>();
    // @ts-expect-error: events.grantRevoked is how code reuse is reported.
    const dispatchCode = () => handleTokenRequest(request, withoutEvents, codeRegistry);
    // @ts-expect-error: events.grantRevoked is how refresh-token reuse is reported.
    const dispatchRefresh = () => handleTokenRequest(request, withoutEvents, refreshRegistry);
    expect([dispatchCode, dispatchRefresh]).toHaveLength(2);
  });

  it('the shipped registry needs what its grants need together, and the harness supplies it', async () => {
    const env = await createEnv();
    expectTypeOf(createGrantRegistry()).toEqualTypeOf<GrantRegistry<TokenEndpointDependencies>>();
    expectTypeOf<TokenEndpointDependencies>().toHaveProperty('verifier');
    expectTypeOf<TokenEndpointDependencies>().toHaveProperty('events');
    expectTypeOf<TokenEndpointDependencies['stores']>().toHaveProperty('deviceCodes');
    expectTypeOf(env.context).toExtend<TokenEndpointDependencies>();
  });

  it('a registry of grants that need less runs with less: client_credentials alone, no verifier, no events', async () => {
    const env = await createEnv();
    const { clock, random, config, keys, stores } = env;
    // Exactly what the grant declares, nothing else: the grant cannot reach anything more.
    const narrow: ClientCredentialsGrantDependencies = {
      stores: { resources: stores.resources, accessTokens: stores.accessTokens },
      clock,
      random,
      signer: keys.signer,
      config,
    };
    const registry = createGrantRegistry([clientCredentialsGrant]);
    expectTypeOf(registry).toEqualTypeOf<GrantRegistry<ClientCredentialsGrantDependencies>>();
    const request = await env.tokenRequest('svc', { grant_type: 'client_credentials', scope: 'orders.read' });

    await expect(handleTokenRequest(request, narrow, registry)).resolves.toMatchObject({
      scope: 'orders.read',
    });
  });

  it('a grant that needs nothing adds nothing to a registry', () => {
    expectTypeOf<
      RegistryDependencies<[typeof clientCredentialsGrant, GrantHandler<unknown>]>
    >().toEqualTypeOf<ClientCredentialsGrantDependencies>();
  });
});
