import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSeedDocument, SeedError } from '../src/seed.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { ORDERS_API, REPORTS_API, testSeed } from './helpers/seed.js';

/** The optional client members added for DPoP, PAR, token exchange and logout (README "Seed file reference"). */

const EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange' as const;

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: 'options-on',
      client_secret: 'options-secret-0123456789',
      grant_types: ['client_credentials', EXCHANGE],
      scope: 'orders.read reports.read',
      dpop_bound_access_tokens: true,
      dpop_nonce_required: true,
      require_pushed_authorization_requests: true,
      keep_offline_access_on_logout: true,
      refresh_token_reuse_interval: 60,
      frontchannel_logout_uri: 'https://rp.example.test/frontchannel',
      token_exchange: {
        audiences: [ORDERS_API, REPORTS_API],
        scopes: ['orders.read'],
        subject_token_types: [
          'urn:ietf:params:oauth:token-type:access_token',
          'urn:ietf:params:oauth:token-type:id_token',
        ],
      },
    },
    {
      client_id: 'exchange-defaults',
      client_secret: 'options-secret-0123456789',
      grant_types: [EXCHANGE],
      token_exchange: { audiences: [ORDERS_API], scopes: ['orders.read'] },
    },
  ];
  ({ app, close } = await startTestApp({ seed }));
});
afterAll(() => close());

function seedError(client: Record<string, unknown>): string {
  try {
    parseSeedDocument({ clients: [{ client_id: 'c', client_secret: 's', ...client }] });
  } catch (error) {
    expect(error).toBeInstanceOf(SeedError);
    return (error as Error).message;
  }
  throw new Error('expected a SeedError');
}

describe('client options in the seed', () => {
  it('stores every option and reads it back', async () => {
    expect(await app.stores.clients.findClient('options-on')).toMatchObject({
      dpopBoundAccessTokens: true,
      dpopNonceRequired: true,
      requirePushedAuthorizationRequests: true,
      keepOfflineAccessOnLogout: true,
      refreshTokenReuseInterval: 60,
      frontchannelLogoutUri: 'https://rp.example.test/frontchannel',
      tokenExchange: {
        audiences: [ORDERS_API, REPORTS_API],
        scopes: ['orders.read'],
        subjectTokenTypes: [
          'urn:ietf:params:oauth:token-type:access_token',
          'urn:ietf:params:oauth:token-type:id_token',
        ],
      },
    });
  });

  it('defaults every option to off, and a policy to access tokens only', async () => {
    expect(await app.stores.clients.findClient('web')).toMatchObject({
      dpopBoundAccessTokens: false,
      dpopNonceRequired: false,
      requirePushedAuthorizationRequests: false,
      keepOfflineAccessOnLogout: false,
      refreshTokenReuseInterval: 0,
      tokenExchange: null,
    });
    expect(
      (await app.stores.clients.findClient('exchange-defaults'))?.tokenExchange?.subjectTokenTypes,
    ).toEqual(['urn:ietf:params:oauth:token-type:access_token']);
  });

  it.each([61, -1, 2.5, '30'])('refuses refresh_token_reuse_interval %j, naming the member', (interval) => {
    expect(
      seedError({ grant_types: ['client_credentials'], refresh_token_reuse_interval: interval }),
    ).toMatch(/refresh_token_reuse_interval/);
  });

  it('refuses inconsistent or malformed token exchange settings, naming the problem', () => {
    expect(seedError({ grant_types: [EXCHANGE] })).toContain('needs a token_exchange policy');
    expect(
      seedError({ grant_types: ['client_credentials'], token_exchange: { audiences: [], scopes: [] } }),
    ).toContain('grant_types lacks the token-exchange grant');
    expect(
      seedError({
        client_secret: undefined,
        grant_types: [EXCHANGE],
        token_exchange: { audiences: [], scopes: [] },
      }),
    ).toContain('requires a client that authenticates');
    expect(
      seedError({ grant_types: [EXCHANGE], token_exchange: { audiences: [], scopes: [], colour: 'red' } }),
    ).toContain('unknown member "colour"');
    expect(
      seedError({
        grant_types: [EXCHANGE],
        token_exchange: {
          audiences: [],
          scopes: [],
          subject_token_types: ['urn:ietf:params:oauth:token-type:saml2'],
        },
      }),
    ).toContain('subject_token_types');
    expect(seedError({ dpop_bound_access_tokens: 'yes' })).toContain('dpop_bound_access_tokens');
  });
});
