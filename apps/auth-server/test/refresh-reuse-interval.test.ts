import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { basicAuthorization, FORM, form, startTestApp, TEST_ISSUER, type TestApp } from './helpers/app.js';
import {
  createPostgresTestDatabase,
  databaseKind,
  postgresForThisFile,
  type TestDatabase,
} from './helpers/database.js';
import { createDpopKey, type DpopKey, dpopProof } from './helpers/dpop.js';
import { issueCode, pkcePair } from './helpers/flows.js';
import { ORDERS_API, SPA_REDIRECT_URI, TEST_SECRETS, testSeed, WEB_REDIRECT_URI } from './helpers/seed.js';

/**
 * Seed member `refresh_token_reuse_interval`: a refresh whose answer was lost (a dropped
 * connection, a database failover, two tabs refreshing at once) is retried with the old token;
 * within the client's interval it gets the same successor again, on any instance, and the chain
 * stays valid. Later, from another client or with another DPoP key, it is reuse (RFC 9700 §4.14.2).
 */

const INTERVAL = 30;
const TOKEN_URL = `${TEST_ISSUER}/token`;
const SCOPE = 'openid offline_access orders.read';

function reuseSeed(): SeedDocument {
  const seed = testSeed();
  const web = seed.clients?.find((client) => client.client_id === 'web');
  if (web === undefined) throw new Error('the test seed has no web client');
  seed.clients = [
    ...(seed.clients ?? []).filter((client) => client !== web),
    { ...web, refresh_token_reuse_interval: INTERVAL },
    { ...web, client_id: 'web-strict' },
    {
      client_id: 'spa-retry',
      redirect_uris: [SPA_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      scope: SCOPE,
      skip_consent: true,
      refresh_token_reuse_interval: INTERVAL,
    },
  ];
  return seed;
}

/** The server's clock: a test moves it past the interval. */
const clock = createTestClock(Math.floor(Date.now() / 1000));

interface Caller {
  clientId: string;
  /** Confidential clients authenticate with the web client's secret; `spa-retry` is public. */
  confidential: boolean;
  dpop?: DpopKey;
}

const WEB: Caller = { clientId: 'web', confidential: true };
const WEB_STRICT: Caller = { clientId: 'web-strict', confidential: true };

async function tokenRequest(app: TestApp, caller: Caller, params: Record<string, string>) {
  const headers: Record<string, string> = { ...FORM };
  if (caller.confidential) headers.authorization = basicAuthorization(caller.clientId, TEST_SECRETS.web);
  if (caller.dpop) headers.dpop = await dpopProof(caller.dpop, { htu: TOKEN_URL, iat: clock.nowSeconds() });
  const body = caller.confidential ? params : { ...params, client_id: caller.clientId };
  return app.inject({ method: 'POST', url: '/token', headers, payload: form(body) });
}

async function firstTokens(app: TestApp, caller: Caller): Promise<Record<string, string>> {
  const { verifier, challenge } = pkcePair();
  const redirectUri = caller.confidential ? WEB_REDIRECT_URI : SPA_REDIRECT_URI;
  const code = await issueCode(app, { clientId: caller.clientId, redirectUri, scope: SCOPE, challenge });
  const response = await tokenRequest(app, caller, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
  });
  if (response.statusCode !== 200) throw new Error(`code redemption failed: ${response.body}`);
  return response.json();
}

const refresh = (app: TestApp, caller: Caller, refreshToken: string) =>
  tokenRequest(app, caller, { grant_type: 'refresh_token', refresh_token: refreshToken });

async function expectRefused(response: Awaited<ReturnType<typeof refresh>>) {
  expect(response.statusCode).toBe(400);
  expect(response.json().error).toBe('invalid_grant');
}

/** The chain is revoked when its newest refresh token no longer works. */
async function expectChainRevoked(app: TestApp, caller: Caller, newest: string) {
  await expectRefused(await refresh(app, caller, newest));
}

async function introspectionActive(app: TestApp, token: string): Promise<boolean> {
  const response = await app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi) },
    payload: form({ token }),
  });
  return response.json().active;
}

describe(`refresh_token_reuse_interval on one instance (${databaseKind})`, () => {
  let app: TestApp;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ app, close } = await startTestApp({ seed: reuseSeed(), clock }));
  });
  afterAll(() => close());

  it('two concurrent refreshes of one token both succeed with the same successor; the chain stays valid', async () => {
    const first = await firstTokens(app, WEB);
    const [a, b] = await Promise.all([
      refresh(app, WEB, first.refresh_token!),
      refresh(app, WEB, first.refresh_token!),
    ]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    expect(a.json().refresh_token).toBe(b.json().refresh_token);
    expect(a.json().access_token).not.toBe(b.json().access_token);
    expect(await introspectionActive(app, a.json().access_token)).toBe(true);
    expect(await introspectionActive(app, b.json().access_token)).toBe(true);
    expect((await refresh(app, WEB, a.json().refresh_token)).statusCode).toBe(200);
  });

  it('with interval 0, of two concurrent refreshes one succeeds; a retry of the old token revokes the chain', async () => {
    const first = await firstTokens(app, WEB_STRICT);
    const answers = await Promise.all([
      refresh(app, WEB_STRICT, first.refresh_token!),
      refresh(app, WEB_STRICT, first.refresh_token!),
    ]);
    const won = answers.filter((answer) => answer.statusCode === 200);
    expect(won).toHaveLength(1);
    await expectRefused(answers.find((answer) => answer.statusCode !== 200)!);
    await expectRefused(await refresh(app, WEB_STRICT, first.refresh_token!));
    await expectChainRevoked(app, WEB_STRICT, won[0]!.json().refresh_token);
  });

  it('a retry after the first answer was lost gets the successor that answer held', async () => {
    const first = await firstTokens(app, WEB);
    // The rotation commits, but its answer never reaches the client.
    const lost = (await refresh(app, WEB, first.refresh_token!)).json().refresh_token;
    clock.advance(INTERVAL - 1);
    const retried = await refresh(app, WEB, first.refresh_token!);
    expect(retried.statusCode).toBe(200);
    expect(retried.json().refresh_token).toBe(lost);
    const next = await refresh(app, WEB, retried.json().refresh_token);
    expect(next.statusCode).toBe(200);
    expect(next.json().refresh_token).not.toBe(lost);
  });

  it('reuse after the interval revokes the chain', async () => {
    const first = await firstTokens(app, WEB);
    const rotated = (await refresh(app, WEB, first.refresh_token!)).json();
    clock.advance(INTERVAL + 1);
    await expectRefused(await refresh(app, WEB, first.refresh_token!));
    await expectChainRevoked(app, WEB, rotated.refresh_token);
    expect(await introspectionActive(app, rotated.access_token)).toBe(false);
  });

  it('another client presenting the rotated token within the interval is refused and revokes the chain', async () => {
    const first = await firstTokens(app, WEB);
    const rotated = (await refresh(app, WEB, first.refresh_token!)).json();
    await expectRefused(await refresh(app, WEB_STRICT, first.refresh_token!));
    await expectChainRevoked(app, WEB, rotated.refresh_token);
  });

  it('a DPoP-bound token: the same key within the interval gets the successor, another key revokes', async () => {
    const key = await createDpopKey();
    const holder: Caller = { clientId: 'spa-retry', confidential: false, dpop: key };
    const first = await firstTokens(app, holder);
    const rotated = await refresh(app, holder, first.refresh_token!);
    expect(rotated.json().token_type).toBe('DPoP');
    const retried = await refresh(app, holder, first.refresh_token!);
    expect(retried.statusCode).toBe(200);
    expect(retried.json().refresh_token).toBe(rotated.json().refresh_token);

    const thief: Caller = { ...holder, dpop: await createDpopKey() };
    await expectRefused(await refresh(app, thief, first.refresh_token!));
    await expectChainRevoked(app, holder, rotated.json().refresh_token);
  });
});

const runs = await postgresForThisFile('refresh-reuse-interval.test.ts');

describe.runIf(runs)('refresh_token_reuse_interval across two instances on one database (PostgreSQL)', () => {
  let database: TestDatabase;
  const instances: Array<Awaited<ReturnType<typeof startTestApp>>> = [];

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    for (let n = 0; n < 2; n++) {
      const own = n === 0 ? database : { ...database, handle: await database.openAnother() };
      instances.push(await startTestApp({ database: own, seed: reuseSeed(), clock }));
    }
  });
  afterAll(async () => {
    for (const instance of instances) await instance.close();
    await database?.drop();
  });

  it('ten refreshes of one token spread over both instances all get the same successor', async () => {
    const [a, b] = instances.map((instance) => instance.app) as [TestApp, TestApp];
    const first = await firstTokens(a, WEB);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, n) => refresh(n % 2 ? a : b, WEB, first.refresh_token!)),
    );
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((answer) => answer.json().refresh_token)).size).toBe(1);
    expect((await refresh(b, WEB, answers[0]!.json().refresh_token)).statusCode).toBe(200);
  });

  it('a retry on the other instance within the interval gets the successor; after it, reuse revokes', async () => {
    const [a, b] = instances.map((instance) => instance.app) as [TestApp, TestApp];
    const first = await firstTokens(a, WEB);
    const lost = (await refresh(a, WEB, first.refresh_token!)).json().refresh_token;
    const retried = await refresh(b, WEB, first.refresh_token!);
    expect(retried.json().refresh_token).toBe(lost);
    clock.advance(INTERVAL + 1);
    await expectRefused(await refresh(b, WEB, first.refresh_token!));
    await expectChainRevoked(a, WEB, lost);
  });
});
