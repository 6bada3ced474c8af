import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clients, resources, ssoSessions, users } from '../src/db/schema.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { setEntryDisabled } from '../src/storage/drizzle/registry-status.js';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { databaseKind } from './helpers/database.js';
import { refreshWithWebClient, webClientTokens } from './helpers/flows.js';
import { captureLogs, openLoginPage, submitLogin } from './helpers/security.js';
import { ORDERS_API, REPORTS_API, TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * The seed file is the truth. A client, resource or user that a later start's
 * file no longer names is disabled (`disabled_at`; rows and history stay): its tokens stop working
 * at introspection, refresh and UserInfo, its sign-in and client authentication fail, and the
 * start-up log names it by id. Naming it again enables it. Runs on PGlite and, with
 * TEST_DATABASE_URL, on PostgreSQL.
 */

let app: TestApp;
let close: () => Promise<void>;
const logs = captureLogs('info');

beforeAll(async () => {
  ({ app, close } = await startTestApp({ logger: logs.logger }));
});
afterAll(() => close());

/** The test seed without `service`, `u-alice` and the reports API (Bob keeps one user named). */
function reducedSeed(): SeedDocument {
  const seed = testSeed();
  return {
    clients: (seed.clients ?? []).filter((client) => client.client_id !== 'service'),
    resources: (seed.resources ?? []).filter((resource) => resource.id !== REPORTS_API),
    users: [{ sub: 'u-bob', username: 'bob', password: 'bob-password-for-tests' }],
  };
}

const serviceBasic = basicAuthorization('service', TEST_SECRETS.service);
const ordersApiBasic = basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi);
const reportsApiBasic = basicAuthorization(REPORTS_API, TEST_SECRETS.reportsApi);

function clientCredentials(scope: string) {
  return app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: serviceBasic },
    payload: form({ grant_type: 'client_credentials', scope }),
  });
}

async function introspect(token: string, authorization: string) {
  return app.inject({
    method: 'POST',
    url: '/introspect',
    headers: { ...FORM, authorization },
    payload: form({ token }),
  });
}

function userInfo(token: string) {
  return app.inject({ method: 'GET', url: '/userinfo', headers: { authorization: `Bearer ${token}` } });
}

describe(`seed file is the truth (${databaseKind})`, () => {
  it('disables what the file no longer names, everywhere, and enables it again when named', async () => {
    const userTokens = await webClientTokens(app);
    const serviceJwt = (await clientCredentials('orders.read')).json().access_token as string;
    const serviceOpaque = (await clientCredentials('reports.read')).json().access_token as string;
    expect((await introspect(String(userTokens.access_token), ordersApiBasic)).json().active).toBe(true);
    expect((await introspect(serviceJwt, ordersApiBasic)).json().active).toBe(true);
    expect((await introspect(serviceOpaque, reportsApiBasic)).json().active).toBe(true);
    expect((await userInfo(String(userTokens.access_token))).statusCode).toBe(200);

    await app.reseed(reducedSeed());

    // The start-up log names what was disabled, by id, never a secret.
    const disabledLine = logs
      .lines()
      .find((line) => line.msg === 'seed: disabled entries the seed file no longer names');
    expect(disabledLine).toMatchObject({
      clients: ['service'],
      resources: [REPORTS_API],
      users: ['u-alice'],
    });
    for (const secret of Object.values(TEST_SECRETS)) expect(logs.text()).not.toContain(secret);

    // Rows are kept, marked disabled (history and references intact).
    const db = app.database.db;
    expect((await db.select().from(clients).where(eq(clients.clientId, 'service')))[0]?.disabledAt).toEqual(
      expect.any(Number),
    );
    expect((await db.select().from(resources).where(eq(resources.id, REPORTS_API)))[0]?.disabledAt).toEqual(
      expect.any(Number),
    );
    expect((await db.select().from(users).where(eq(users.sub, 'u-alice')))[0]?.disabledAt).toEqual(
      expect.any(Number),
    );
    expect((await db.select().from(clients).where(eq(clients.clientId, 'web')))[0]?.disabledAt).toBeNull();

    // Client authentication of the disabled client and resource fails.
    const refused = await clientCredentials('orders.read');
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error).toBe('invalid_client');
    expect((await introspect(serviceOpaque, reportsApiBasic)).statusCode).toBe(401);
    // Their tokens, and the disabled user's, are inactive.
    expect((await introspect(serviceJwt, ordersApiBasic)).json()).toEqual({ active: false });
    expect((await introspect(String(userTokens.access_token), ordersApiBasic)).json()).toEqual({
      active: false,
    });
    // The disabled user: refresh, UserInfo and sign-in fail.
    const refresh = await refreshWithWebClient(app, String(userTokens.refresh_token));
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json().error).toBe('invalid_grant');
    const info = await userInfo(String(userTokens.access_token));
    expect(info.statusCode).toBe(401);
    expect(info.headers['www-authenticate']).toContain('error="invalid_token"');
    const { browser, page } = await openLoginPage(app, { remoteAddress: '192.0.2.61' });
    expect((await submitLogin(browser, page, 'alice', TEST_SECRETS.alicePassword)).statusCode).toBe(401);

    // Named again: enabled again.
    await app.reseed(testSeed());
    expect((await clientCredentials('orders.read')).statusCode).toBe(200);
    expect((await introspect(serviceOpaque, reportsApiBasic)).json().active).toBe(true);
    expect((await userInfo(String(userTokens.access_token))).statusCode).toBe(200);
    const again = await openLoginPage(app, { remoteAddress: '192.0.2.62' });
    expect(
      (await submitLogin(again.browser, again.page, 'alice', TEST_SECRETS.alicePassword)).statusCode,
    ).toBe(303);
    expect((await db.select().from(users).where(eq(users.sub, 'u-alice')))[0]?.disabledAt).toBeNull();
  });

  it('ends the sessions of a user it no longer names, as a logout does (back-channel logout: apps/orders/test/account-lifecycle.e2e.test.ts)', async () => {
    const { browser, page } = await openLoginPage(app, { remoteAddress: '192.0.2.63' });
    expect((await submitLogin(browser, page, 'alice', TEST_SECRETS.alicePassword)).statusCode).toBe(303);
    const aliceSessions = () =>
      app.database.db.select().from(ssoSessions).where(eq(ssoSessions.sub, 'u-alice'));
    expect((await aliceSessions()).length).toBeGreaterThan(0);

    await app.reseed(reducedSeed());
    expect(await aliceSessions()).toHaveLength(0);
    expect(
      logs.lines().find((line) => line.msg === 'disabled users signed out of their sessions'),
    ).toMatchObject({
      users: ['u-alice'],
    });
    await app.reseed(testSeed());
  });

  it('an unchanged file disables nothing and logs no disabled entries', async () => {
    const before = logs.lines().length;
    await app.reseed(testSeed());
    const added = logs.lines().slice(before);
    expect(added.some((line) => line.msg === 'seed applied')).toBe(true);
    expect(added.some((line) => String(line.msg).startsWith('seed: disabled'))).toBe(false);
  });

  it('setEntryDisabled is the same switch for one entry (the admin CLI reuses it)', async () => {
    const db = app.database.db;
    expect(await setEntryDisabled(db, 'users', 'u-alice', 1_800_000_000)).toBe(true);
    expect(await setEntryDisabled(db, 'users', 'u-alice', 1_800_000_001)).toBe(false);
    expect(await app.stores.users.findUserByUsername('alice')).toBeNull();
    expect(await app.stores.users.findUserBySub('u-alice')).toBeNull();
    expect(await setEntryDisabled(db, 'users', 'u-alice', null)).toBe(true);
    expect((await app.stores.users.findUserBySub('u-alice'))?.username).toBe('alice');

    expect(await setEntryDisabled(db, 'clients', 'service', 1_800_000_000)).toBe(true);
    app.stores.invalidateRegistry();
    expect(await app.stores.clients.findClient('service')).toBeNull();
    expect(await setEntryDisabled(db, 'clients', 'service', null)).toBe(true);
    app.stores.invalidateRegistry();
    expect((await app.stores.clients.findClient('service'))?.clientId).toBe('service');
    expect(await setEntryDisabled(db, 'resources', 'nope', null)).toBe(false);
  });
});
