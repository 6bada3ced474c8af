import { describe, expect, it } from 'vitest';
import {
  authenticateClient,
  authenticateIntrospectionCaller,
  parseBasicAuthorization,
} from '../src/client-authentication.js';
import { OAuthError } from '../src/errors.js';
import type { Client, Resource } from '../src/model.js';
import type { ClientStore, ResourceStore } from '../src/storage/index.js';
import { makeClient, makeResource, publicClient, secrets } from './fixtures.js';

/** A secret as Python's Authlib and requests-oauthlib send it: in Basic without form-encoding. */
const AWKWARD_SECRET = 'a+b%2F c:d%';
const rawBasic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

const clientList: Client[] = [
  makeClient(),
  publicClient(),
  makeClient({ clientId: 'a b:c', secretHash: secrets.hash('p@ss:w rd') }),
  makeClient({ clientId: 'python', secretHash: secrets.hash(AWKWARD_SECRET) }),
  makeClient({ clientId: 'basic-only', authMethods: ['client_secret_basic'], secretHash: secrets.hash('s') }),
];
const resourceList: Resource[] = [makeResource(), makeResource({ id: 'no-secret-api', secretHash: null })];
const clients: ClientStore = { findClient: async (id) => clientList.find((c) => c.clientId === id) ?? null };
const resources: ResourceStore = {
  findResource: async (id) => resourceList.find((r) => r.id === id) ?? null,
  listResources: async () => resourceList,
};
const deps = { clients, resources, secrets };

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function failure(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof OAuthError) return error;
    throw error;
  }
  throw new Error('expected an OAuthError');
}

describe('parseBasicAuthorization', () => {
  it('decodes form-urlencoded id and secret (RFC 6749 §2.3.1)', () => {
    expect(parseBasicAuthorization(basic('a b:c', 'p@ss:w rd'))).toMatchObject({
      clientId: 'a b:c',
      clientSecret: 'p@ss:w rd',
    });
  });

  it('decodes + as a space', () => {
    const header = `Basic ${Buffer.from('a+b:x+y').toString('base64')}`;
    expect(parseBasicAuthorization(header)).toMatchObject({ clientId: 'a b', clientSecret: 'x y' });
  });

  it('keeps the undecoded credentials when they differ, or when they cannot be form-decoded', () => {
    const plus = `Basic ${Buffer.from('a+b:x+y').toString('base64')}`;
    expect(parseBasicAuthorization(plus)?.raw).toEqual({ clientId: 'a+b', clientSecret: 'x+y' });
    expect(parseBasicAuthorization(basic('web', 'plain'))?.raw).toBeUndefined();
    const percent = `Basic ${Buffer.from('web:100%zz').toString('base64')}`;
    expect(parseBasicAuthorization(percent)).toEqual({ clientId: 'web', clientSecret: '100%zz' });
  });

  it('is case-insensitive on the scheme', () => {
    expect(parseBasicAuthorization(basic('web', 's').replace('Basic', 'bAsIc'))?.clientId).toBe('web');
  });

  it.each([undefined, null, 'Bearer abc', 'DPoP abc'])('returns null for %j', (header) => {
    expect(parseBasicAuthorization(header)).toBeNull();
  });

  it.each([
    `Basic ${Buffer.from('no-colon').toString('base64')}`,
    `Basic ${Buffer.from(':secret').toString('base64')}`,
    'Basic a b c',
  ])('throws invalid_client for the malformed header %j', (header) => {
    expect(() => parseBasicAuthorization(header)).toThrow(OAuthError);
  });
});

describe('authenticateClient', () => {
  it.each([
    ['client_secret_basic', { authorization: basic('web', 'web-secret'), params: {} }, 'web', true],
    [
      'client_secret_basic with the same client_id in the body',
      { authorization: basic('web', 'web-secret'), params: { client_id: 'web' } },
      'web',
      true,
    ],
    [
      'client_secret_basic with encoded characters',
      { authorization: basic('a b:c', 'p@ss:w rd'), params: {} },
      'a b:c',
      true,
    ],
    ['client_secret_post', { params: { client_id: 'web', client_secret: 'web-secret' } }, 'web', true],
    ['none (public client)', { params: { client_id: 'spa' } }, 'spa', false],
  ] as const)('accepts %s', async (method, input, clientId, authenticated) => {
    const result = await authenticateClient(input, deps);
    expect(result.client.clientId).toBe(clientId);
    expect(result.authenticated).toBe(authenticated);
    expect(result.method).toBe(method.split(' ')[0]);
  });

  it.each([
    ['a wrong secret (Basic)', { authorization: basic('web', 'nope'), params: {} }, 'invalid_client'],
    ['a wrong secret (post)', { params: { client_id: 'web', client_secret: 'nope' } }, 'invalid_client'],
    ['an unknown client', { params: { client_id: 'ghost' } }, 'invalid_client'],
    ['an unknown client with a secret', { authorization: basic('ghost', 'x'), params: {} }, 'invalid_client'],
    ['a confidential client without a secret', { params: { client_id: 'web' } }, 'invalid_client'],
    [
      'a public client presenting a secret',
      { params: { client_id: 'spa', client_secret: 'x' } },
      'invalid_client',
    ],
    ['no client at all', { params: {} }, 'invalid_client'],
    ['client_secret without client_id', { params: { client_secret: 'web-secret' } }, 'invalid_client'],
    [
      'a client assertion',
      { params: { client_id: 'web', client_assertion: 'x', client_assertion_type: 'y' } },
      'invalid_client',
    ],
    [
      'two methods',
      { authorization: basic('web', 'web-secret'), params: { client_secret: 'web-secret' } },
      'invalid_request',
    ],
    [
      'a body client_id that differs from Basic',
      { authorization: basic('web', 'web-secret'), params: { client_id: 'spa' } },
      'invalid_request',
    ],
  ] as const)('rejects %s', async (_name, input, code) => {
    const error = await failure(authenticateClient(input, deps));
    expect(error.code).toBe(code);
    if (code === 'invalid_client') {
      expect(error.status).toBe(401);
      expect(error.headers['WWW-Authenticate']).toMatch(/^Basic /);
    } else {
      expect(error.status).toBe(400);
    }
  });
});

describe('authenticateClient: lenient where real clients skip form-encoding (RFC 6749 §2.3.1)', () => {
  it('accepts a secret with +, %, : and a space sent raw in Basic', async () => {
    const result = await authenticateClient(
      { authorization: rawBasic('python', AWKWARD_SECRET), params: {} },
      deps,
    );
    expect(result).toMatchObject({ client: { clientId: 'python' }, authenticated: true });
  });

  it('still accepts the same secret form-encoded', async () => {
    const result = await authenticateClient(
      { authorization: basic('python', AWKWARD_SECRET), params: {} },
      deps,
    );
    expect(result.client.clientId).toBe('python');
  });

  it('refuses a wrong secret either way with the same invalid_client', async () => {
    for (const authorization of [rawBasic('python', 'a+b%2F c:x%'), basic('python', 'a+b%2F c:x%')]) {
      const error = await failure(authenticateClient({ authorization, params: {} }, deps));
      expect(error.code).toBe('invalid_client');
      expect(error.status).toBe(401);
    }
  });
});

describe("authenticateClient: the method must be the client's own and accepted at the endpoint", () => {
  it('refuses client_secret_post from a client registered for client_secret_basic', async () => {
    const post = { params: { client_id: 'basic-only', client_secret: 's' } };
    expect((await failure(authenticateClient(post, deps))).code).toBe('invalid_client');
    const viaBasic = await authenticateClient({ authorization: basic('basic-only', 's'), params: {} }, deps);
    expect(viaBasic.method).toBe('client_secret_basic');
  });

  it('refuses none at introspection, where discovery does not list it', async () => {
    const input = { params: { client_id: 'spa' }, endpoint: 'introspection' as const };
    expect((await failure(authenticateClient(input, deps))).code).toBe('invalid_client');
    expect((await authenticateClient({ ...input, endpoint: 'revocation' }, deps)).method).toBe('none');
  });
});

describe('authenticateIntrospectionCaller', () => {
  it('authenticates a resource by id and secret in the body (client_secret_post)', async () => {
    const caller = await authenticateIntrospectionCaller(
      { params: { client_id: 'orders-api', client_secret: 'orders-secret' } },
      deps,
    );
    expect(caller).toMatchObject({ type: 'resource', resource: { id: 'orders-api' } });
    const wrong = { params: { client_id: 'orders-api', client_secret: 'nope' } };
    expect((await failure(authenticateIntrospectionCaller(wrong, deps))).code).toBe('invalid_client');
  });

  it('authenticates a resource by id and secret', async () => {
    const caller = await authenticateIntrospectionCaller(
      { authorization: basic('orders-api', 'orders-secret'), params: {} },
      deps,
    );
    expect(caller).toMatchObject({ type: 'resource', resource: { id: 'orders-api' } });
  });

  it('authenticates a confidential client', async () => {
    const caller = await authenticateIntrospectionCaller(
      { authorization: basic('web', 'web-secret'), params: {} },
      deps,
    );
    expect(caller).toMatchObject({ type: 'client', client: { clientId: 'web' } });
  });

  it.each([
    ['a wrong resource secret', { authorization: basic('orders-api', 'nope'), params: {} }],
    ['a resource without a secret', { authorization: basic('no-secret-api', 'x'), params: {} }],
    ['a public client', { params: { client_id: 'spa' } }],
  ])('rejects %s with invalid_client', async (_name, input) => {
    const error = await failure(authenticateIntrospectionCaller(input, deps));
    expect(error.code).toBe('invalid_client');
    expect(error.status).toBe(401);
  });
});
