import { createLocalJWKSet, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { AuthorizationRequestError } from '../src/authorization.js';
import { OAuthError } from '../src/errors.js';
import type { Client } from '../src/model.js';
import { PAR_REQUEST_URI_PREFIX } from '../src/par.js';
import {
  resolveAuthorizationRequestObject,
  verifyRequestObject,
  verifyUnsignedRequestObjectByReference,
} from '../src/request-object.js';
import { requestUriToFetch, resolveRequestUriByReference } from '../src/request-uri.js';
import { createMemoryDpopReplayStore } from '../src/storage/memory-dpop-replay.js';
import { createMemoryStores } from '../src/testing.js';
import { ISSUER, makeClient } from './fixtures.js';

const NOW = 1_800_000_000;
const REQUEST_URI = 'https://rp.example.test/request.jwt';

function codeOf(action: () => unknown): string {
  try {
    action();
    return 'no error';
  } catch (error) {
    if (error instanceof OAuthError) return error.code;
    throw error;
  }
}

describe('requestUriToFetch: which request_uri a client may use (OIDC Core §6.2, Registration §2)', () => {
  const client = makeClient({ requestUris: [`${REQUEST_URI}#v1`] });

  it('takes a registered URI, ignoring the fragment on either side', () => {
    expect(requestUriToFetch(REQUEST_URI, client)).toBe(REQUEST_URI);
    expect(requestUriToFetch(`${REQUEST_URI}#v2`, client)).toBe(REQUEST_URI);
  });

  it('refuses an unregistered URI, even one that only differs in path, query or case', () => {
    for (const uri of [
      'https://rp.example.test/other.jwt',
      `${REQUEST_URI}?x=1`,
      'https://RP.example.test/request.jwt',
    ]) {
      expect(codeOf(() => requestUriToFetch(uri, client))).toBe('invalid_request_uri');
    }
    expect(codeOf(() => requestUriToFetch(REQUEST_URI, makeClient()))).toBe('invalid_request_uri');
  });

  it('refuses a URI longer than 512 characters', () => {
    const long = `${REQUEST_URI}?${'a'.repeat(512)}`;
    expect(codeOf(() => requestUriToFetch(long, makeClient({ requestUris: [long] })))).toBe(
      'invalid_request_uri',
    );
  });

  it('refuses every URL for a FAPI 2.0 client (PAR only)', () => {
    const fapi2 = makeClient({ profile: 'fapi2', requestUris: [REQUEST_URI] });
    expect(codeOf(() => requestUriToFetch(REQUEST_URI, fapi2))).toBe('invalid_request_uri');
  });
});

describe('resolveRequestUriByReference (RFC 9101 §5.2)', () => {
  async function setUp(served: (client: Client) => Promise<string>, overrides: Partial<Client> = {}) {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), alg: 'RS256' };
    const client = makeClient({ jwks: { keys: [jwk] }, requestUris: [REQUEST_URI], ...overrides });
    const fetched: string[] = [];
    const deps = {
      keys: { keysFor: () => createLocalJWKSet({ keys: [jwk] }) },
      replay: createMemoryDpopReplayStore(),
      issuer: ISSUER,
      clock: { nowSeconds: () => NOW },
      clients: createMemoryStores({ clients: [client], resources: [] }).clients,
      fetchRequestObject: async (url: string, forClient: Client) => {
        fetched.push(url);
        return served(forClient);
      },
    };
    const claims = {
      iss: client.clientId,
      aud: ISSUER,
      exp: NOW + 60,
      response_type: 'code',
      scope: 'openid',
    };
    const signed = () =>
      new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'oauth-authz-req+jwt' }).sign(privateKey);
    const unsigned = (changes: Record<string, unknown> = {}) =>
      new UnsecuredJWT({ ...claims, ...changes }).encode();
    return { client, deps, fetched, signed, unsigned };
  }
  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => 'no error',
      (error) => {
        if (!(error instanceof AuthorizationRequestError)) return Promise.reject(error);
        expect(error.redirectable).toBe(false);
        return error.error.code;
      },
    );

  it('answers the parameters of a signed object fetched from a registered URI', async () => {
    let object = '';
    const { deps, fetched, signed } = await setUp(async () => object);
    object = await signed();
    const params = await resolveRequestUriByReference({ client_id: 'web', request_uri: REQUEST_URI }, deps);
    expect(params).toMatchObject({ client_id: 'web', response_type: 'code', scope: 'openid' });
    expect(fetched).toEqual([REQUEST_URI]);
  });

  it('leaves PAR references and requests without request_uri alone', async () => {
    const { deps, fetched } = await setUp(async () => '');
    expect(
      await resolveRequestUriByReference(
        { client_id: 'web', request_uri: `${PAR_REQUEST_URI_PREFIX}x` },
        deps,
      ),
    ).toBeNull();
    expect(await resolveRequestUriByReference({ client_id: 'web' }, deps)).toBeNull();
    expect(fetched).toEqual([]);
  });

  it('refuses an unregistered URI without fetching it', async () => {
    const { deps, fetched } = await setUp(async () => '');
    const params = { client_id: 'web', request_uri: 'https://rp.example.test/other.jwt' };
    expect(await failure(resolveRequestUriByReference(params, deps))).toBe('invalid_request_uri');
    expect(fetched).toEqual([]);
  });

  it('answers invalid_request_uri when the fetch fails, invalid_request_object for bad content', async () => {
    const down = await setUp(async () => Promise.reject(new Error('connection refused')));
    const params = { client_id: 'web', request_uri: REQUEST_URI };
    expect(await failure(resolveRequestUriByReference(params, down.deps))).toBe('invalid_request_uri');
    const garbage = await setUp(async () => 'not a jwt');
    expect(await failure(resolveRequestUriByReference(params, garbage.deps))).toBe('invalid_request_object');
  });

  it('accepts an unsigned (alg none) object by reference from a plain client (OIDC Core §6.2, §15.2)', async () => {
    let object = '';
    const { deps, unsigned } = await setUp(async () => object);
    const params = { client_id: 'web', request_uri: REQUEST_URI };
    for (const changes of [{}, { iss: undefined, aud: undefined, exp: undefined }, { client_id: 'web' }]) {
      object = unsigned(changes);
      expect(await resolveRequestUriByReference(params, deps)).toMatchObject({
        client_id: 'web',
        response_type: 'code',
        scope: 'openid',
      });
    }
  });

  it('does not keep an unsigned object’s jti: the same object may be fetched again', async () => {
    let object = '';
    const { deps, unsigned } = await setUp(async () => object);
    object = unsigned({ jti: 'same' });
    const params = { client_id: 'web', request_uri: REQUEST_URI };
    await resolveRequestUriByReference(params, deps);
    expect(await resolveRequestUriByReference(params, deps)).toMatchObject({ response_type: 'code' });
  });

  it('refuses an unsigned object by reference from a client that asked for signed objects', async () => {
    let object = '';
    const { deps, unsigned } = await setUp(async () => object, { requireSignedRequestObject: true });
    object = unsigned();
    const params = { client_id: 'web', request_uri: REQUEST_URI };
    expect(await failure(resolveRequestUriByReference(params, deps))).toBe('invalid_request_object');
  });

  it('refuses an unsigned object for a FAPI 2.0 client even past the request_uri check', async () => {
    const { client, deps, unsigned } = await setUp(async () => '', { profile: 'fapi2' });
    expect(codeOf(() => verifyUnsignedRequestObjectByReference(unsigned(), client, deps))).toBe(
      'invalid_request_object',
    );
  });

  it('refuses an unsigned object whose iss, aud or client_id is wrong, or which has expired', async () => {
    let object = '';
    const { deps, unsigned } = await setUp(async () => object);
    const params = { client_id: 'web', request_uri: REQUEST_URI };
    for (const changes of [
      { iss: 'other' },
      { aud: 'https://other.example.test' },
      { client_id: 'other' },
      { exp: NOW - 3600 },
      { nbf: NOW + 3600 },
      { request_uri: REQUEST_URI },
    ]) {
      object = unsigned(changes);
      expect(await failure(resolveRequestUriByReference(params, deps))).toBe('invalid_request_object');
    }
  });

  it('refuses an unsigned object by value and at PAR (verifyRequestObject), even from a plain client', async () => {
    const { client, deps, unsigned } = await setUp(async () => '');
    const byValue = { client_id: 'web', request: unsigned() };
    expect(await failure(resolveAuthorizationRequestObject(byValue, deps))).toBe('invalid_request_object');
    await expect(verifyRequestObject(unsigned(), client, deps)).rejects.toMatchObject({
      code: 'invalid_request_object',
    });
  });

  it('refuses request and request_uri together, and a missing client_id', async () => {
    const { deps } = await setUp(async () => '');
    expect(
      await failure(
        resolveRequestUriByReference({ client_id: 'web', request: 'x', request_uri: REQUEST_URI }, deps),
      ),
    ).toBe('invalid_request');
    expect(await failure(resolveRequestUriByReference({ request_uri: REQUEST_URI }, deps))).toBe(
      'invalid_request',
    );
  });
});
