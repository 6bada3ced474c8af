import { describe, expect, it } from 'vitest';
import { AuthorizationRequestError, validateAuthorizationRequest } from '../src/authorization.js';
import { OAuthError } from '../src/errors.js';
import {
  checkPushedAuthorizationRequired,
  PAR_REQUEST_URI_PREFIX,
  pushAuthorizationRequest,
  resolvePushedAuthorizationRequest,
  spendPushedAuthorizationRequest,
} from '../src/par.js';
import {
  createMemoryPushedAuthorizationRequestStore,
  createMemoryStores,
  createTestClock,
  createTestRandom,
} from '../src/testing.js';
import { billingResource, makeClient, makeResource, publicClient } from './fixtures.js';
import { CHALLENGE } from './harness.js';

function setup() {
  const clock = createTestClock();
  const stores = createMemoryStores({
    clients: [makeClient(), publicClient({ requirePushedAuthorizationRequests: true })],
    resources: [makeResource(), billingResource()],
  });
  const store = createMemoryPushedAuthorizationRequestStore();
  const context = {
    store,
    clients: stores.clients,
    resources: stores.resources,
    clock,
    random: createTestRandom('par'),
  };
  return { clock, stores, store, context };
}

const authorizationParams = (over: Record<string, string> = {}): Record<string, string> => ({
  response_type: 'code',
  redirect_uri: 'https://app.example.test/cb',
  scope: 'openid orders.read',
  state: 'state-1',
  code_challenge: CHALLENGE,
  code_challenge_method: 'S256',
  ...over,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason,
  );
}

describe('pushAuthorizationRequest (RFC 9126 §2)', () => {
  it('stores a valid request and answers a one-minute request_uri', async () => {
    const { context, stores } = setup();
    const client = (await stores.clients.findClient('web'))!;
    const response = await pushAuthorizationRequest(
      { client, params: authorizationParams(), resources: ['orders-api', 'billing-api'] },
      context,
    );
    expect(response.expires_in).toBe(60);
    expect(response.request_uri.startsWith(PAR_REQUEST_URI_PREFIX)).toBe(true);
    expect(response.request_uri.length).toBeGreaterThan(PAR_REQUEST_URI_PREFIX.length + 40);
    const resolved = await resolvePushedAuthorizationRequest(
      { client_id: 'web', request_uri: response.request_uri },
      context,
    );
    expect(resolved?.params).toEqual({
      ...authorizationParams(),
      client_id: 'web',
      resource: ['orders-api', 'billing-api'],
    });
    // What /authorize then validates is the pushed request, resources included.
    const request = await validateAuthorizationRequest(resolved!.params, stores);
    expect(request.resources).toEqual(['orders-api', 'billing-api']);
  });

  it.each([
    ['a request_uri in the pushed request', { request_uri: `${PAR_REQUEST_URI_PREFIX}x` }, 'invalid_request'],
    ['a client_id of another client', { client_id: 'spa' }, 'invalid_request'],
    ['an unregistered redirect_uri', { redirect_uri: 'https://evil.example.test/cb' }, 'invalid_request'],
    ['a scope the client lacks', { scope: 'openid admin' }, 'invalid_scope'],
    ['a request object', { request: 'eyJ.x.y' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
  ])('refuses %s with a JSON error (%s), storing nothing', async (_name, over, code) => {
    const { context, stores, store } = setup();
    const client = (await stores.clients.findClient('web'))!;
    const error = await rejection(
      pushAuthorizationRequest({ client, params: authorizationParams(over), resources: [] }, context),
    );
    expect(error).toBeInstanceOf(OAuthError);
    expect((error as OAuthError).code).toBe(code);
    expect(await store.deleteExpiredPushedAuthorizationRequests(Number.MAX_SAFE_INTEGER)).toBe(0);
  });

  it('refuses an unknown resource with invalid_target', async () => {
    const { context, stores } = setup();
    const client = (await stores.clients.findClient('web'))!;
    const error = await rejection(
      pushAuthorizationRequest(
        { client, params: authorizationParams(), resources: ['unknown-api'] },
        context,
      ),
    );
    expect((error as OAuthError).code).toBe('invalid_target');
  });
});

describe('resolvePushedAuthorizationRequest (RFC 9126 §4)', () => {
  async function pushed() {
    const env = setup();
    const client = (await env.stores.clients.findClient('web'))!;
    const { request_uri } = await pushAuthorizationRequest(
      { client, params: authorizationParams(), resources: [] },
      env.context,
    );
    return { ...env, requestUri: request_uri };
  }

  const unredirectableCode = async (promise: Promise<unknown>) => {
    const error = await rejection(promise);
    expect(error).toBeInstanceOf(AuthorizationRequestError);
    expect((error as AuthorizationRequestError).redirectable).toBe(false);
    return (error as AuthorizationRequestError).error.code;
  };

  it('answers null without a request_uri', async () => {
    const { context } = setup();
    expect(
      await resolvePushedAuthorizationRequest(authorizationParams({ client_id: 'web' }), context),
    ).toBeNull();
  });

  it('opens again until a code spends it (RFC 9126 §7.3), then never again', async () => {
    const { context, requestUri } = await pushed();
    const open = () =>
      resolvePushedAuthorizationRequest({ client_id: 'web', request_uri: requestUri }, context);
    const first = await open();
    expect(await open()).toEqual(first);
    await spendPushedAuthorizationRequest(first!.requestUriHash, 'web', context);
    expect(await unredirectableCode(open())).toBe('invalid_request_uri');
    expect(
      await unredirectableCode(spendPushedAuthorizationRequest(first!.requestUriHash, 'web', context)),
    ).toBe('invalid_request_uri');
  });

  it('can be spent after its expiry by an authorization opened before it', async () => {
    const { context, clock, stores, requestUri } = await pushed();
    const opened = await resolvePushedAuthorizationRequest(
      { client_id: 'web', request_uri: requestUri },
      context,
    );
    clock.advance(300);
    // Another push sweeps expired requests; one opened this recently is kept for its interaction.
    const client = (await stores.clients.findClient('web'))!;
    await pushAuthorizationRequest({ client, params: authorizationParams(), resources: [] }, context);
    await expect(
      spendPushedAuthorizationRequest(opened!.requestUriHash, 'web', context),
    ).resolves.toBeUndefined();
  });

  it('expires after 60 seconds', async () => {
    const { context, clock, requestUri } = await pushed();
    clock.advance(60);
    expect(
      await unredirectableCode(
        resolvePushedAuthorizationRequest({ client_id: 'web', request_uri: requestUri }, context),
      ),
    ).toBe('invalid_request_uri');
  });

  it('refuses another client_id without spending the request, and requires a client_id', async () => {
    const { context, requestUri } = await pushed();
    expect(
      await unredirectableCode(
        resolvePushedAuthorizationRequest({ client_id: 'spa', request_uri: requestUri }, context),
      ),
    ).toBe('invalid_request_uri');
    expect(
      await unredirectableCode(resolvePushedAuthorizationRequest({ request_uri: requestUri }, context)),
    ).toBe('invalid_request');
    expect(
      await resolvePushedAuthorizationRequest({ client_id: 'web', request_uri: requestUri }, context),
    ).not.toBeNull();
  });

  it('ignores the other parameters of the authorization request', async () => {
    const { context, requestUri } = await pushed();
    const resolved = await resolvePushedAuthorizationRequest(
      {
        client_id: 'web',
        request_uri: requestUri,
        scope: 'openid orders.write',
        redirect_uri: 'https://evil/',
      },
      context,
    );
    expect(resolved?.params).toMatchObject({
      scope: 'openid orders.read',
      redirect_uri: 'https://app.example.test/cb',
    });
  });

  it('leaves a request_uri that is not a PAR reference to request-uri.ts (by reference, RFC 9101 §5.2)', async () => {
    const { context } = setup();
    expect(
      await resolvePushedAuthorizationRequest(
        { client_id: 'web', request_uri: 'https://rp.example.test/request.jwt' },
        context,
      ),
    ).toBeNull();
  });
});

describe('checkPushedAuthorizationRequired (RFC 9126 §6)', () => {
  it('sends a client that must push back to its redirect URI with invalid_request, unless it pushed', async () => {
    const { stores } = setup();
    const request = await validateAuthorizationRequest(
      authorizationParams({ client_id: 'spa', redirect_uri: 'https://app.example.test/cb' }),
      stores,
    );
    const error = (() => {
      try {
        checkPushedAuthorizationRequired(request, false);
      } catch (caught) {
        return caught;
      }
      throw new Error('expected an error');
    })() as AuthorizationRequestError;
    expect(error.redirectable).toBe(true);
    expect(error.redirectParameters('https://issuer.example')).toMatchObject({
      error: 'invalid_request',
      state: 'state-1',
    });
    expect(() => checkPushedAuthorizationRequired(request, true)).not.toThrow();
    const web = await validateAuthorizationRequest(authorizationParams({ client_id: 'web' }), stores);
    expect(() => checkPushedAuthorizationRequired(web, false)).not.toThrow();
  });
});
