import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { databaseRateLimitStore } from '../src/http/database-rate-limit-store.js';
import { createLoginAttemptLimiter } from '../src/interaction/login-attempt-limiter.js';
import { basicAuthorization, FORM, startTestApp } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { captureLogs, openLoginPage, submitLogin } from './helpers/security.js';
import { TEST_SECRETS } from './helpers/seed.js';
import { ALICE, BOB, signInSeed } from './sign-in-fixtures.js';

/**
 * Rate limits (docs/security-and-operations.md "Rate limits"): failed sign-ins per username and per
 * IP on the shared rate_limit_counters table, and token requests per client. (User-code entry:
 * device.test.ts.)
 */

describe('defaults', () => {
  it('are documented numbers: 5 failures per username, 50 per IP, 15-minute window, token limit off, 10 registrations a minute', () => {
    const config = loadConfig({ NODE_ENV: 'development', DATABASE_URL: 'pglite://memory' });
    expect(config.rateLimits).toEqual({
      loginMaxFailuresPerUsername: 5,
      loginMaxFailuresPerIp: 50,
      loginFailureWindowSeconds: 900,
      tokenRequestsPerMinute: 0,
      registrationsPerMinute: 10,
      store: 'memory',
    });
  });

  it('reject a store that is neither memory nor database', () => {
    expect(() => loadConfig({ DATABASE_URL: 'pglite://memory', RATE_LIMIT_STORE: 'redis' })).toThrow(
      /RATE_LIMIT_STORE/,
    );
  });
});

describe('failed sign-ins per username', () => {
  const clock = createTestClock(1_800_000_000);
  const logs = captureLogs();
  let database: TestDatabase;
  let first: Awaited<ReturnType<typeof startTestApp>>;
  let second: Awaited<ReturnType<typeof startTestApp>>;
  const env = { LOGIN_MAX_FAILURES_PER_USERNAME: '3', LOGIN_MAX_FAILURES_PER_IP: '1000' };

  beforeAll(async () => {
    database = await createTestDatabase();
    // Two instances on one database: the counter is a row, so it holds across them.
    first = await startTestApp({ database, seed: signInSeed(), clock, env, logger: logs.logger });
    second = await startTestApp({ database, seed: signInSeed(), clock, env, logger: logs.logger });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  it('locks the username after 3 failures on either instance: 429, Retry-After, a page saying when, even with the right password', async () => {
    const messages: string[] = [];
    for (const app of [first.app, second.app, first.app]) {
      const { browser, page } = await openLoginPage(app);
      const failed = await submitLogin(browser, page, ALICE.username, 'wrong-password');
      expect(failed.statusCode).toBe(401);
      messages.push(/id="login-error">([^<]*)</.exec(failed.body)![1]!);
    }
    // The failure before the last attempt warns of the lock; the others do not.
    expect(messages).toEqual([
      'Invalid username or password.',
      'Invalid username or password. 1 attempt left before a 15-minute lock.',
      'Invalid username or password.',
    ]);
    const { browser, page } = await openLoginPage(second.app);
    const locked = await submitLogin(browser, page, ALICE.username, ALICE.password);
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBe('900');
    expect(locked.body).toContain('Please try again in 15 minutes.');
    expect(locked.headers['set-cookie']?.toString() ?? '').not.toContain('op_session');

    // Another person signing in from the same address is not affected.
    const other = await openLoginPage(first.app);
    expect((await submitLogin(other.browser, other.page, BOB.username, BOB.password)).statusCode).toBe(303);
  });

  it('tells the remaining time as the window runs down, and lets the person in once it has ended', async () => {
    clock.advance(600);
    const { browser, page } = await openLoginPage(first.app);
    const locked = await submitLogin(browser, page, ALICE.username, ALICE.password);
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBe('300');
    expect(locked.body).toContain('Please try again in 5 minutes.');

    clock.advance(301);
    const again = await openLoginPage(second.app);
    expect((await submitLogin(again.browser, again.page, ALICE.username, ALICE.password)).statusCode).toBe(
      303,
    );
  });

  it('a successful sign-in clears the username counter', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const { browser, page } = await openLoginPage(first.app);
      expect((await submitLogin(browser, page, ALICE.username, 'wrong')).statusCode).toBe(401);
    }
    const success = await openLoginPage(first.app);
    expect(
      (await submitLogin(success.browser, success.page, ALICE.username, ALICE.password)).statusCode,
    ).toBe(303);
    // Three more failures are allowed before the next lock.
    for (let attempt = 0; attempt < 3; attempt++) {
      const { browser, page } = await openLoginPage(second.app);
      expect((await submitLogin(browser, page, ALICE.username, 'wrong')).statusCode).toBe(401);
    }
    const { browser, page } = await openLoginPage(second.app);
    expect((await submitLogin(browser, page, ALICE.username, 'wrong')).statusCode).toBe(429);
  });

  it('writes an auth.rate_limit.exceeded event naming the limit, never the username typed', () => {
    const trips = logs.events('auth.rate_limit.exceeded');
    expect(trips.length).toBeGreaterThanOrEqual(1);
    expect(trips[0]).toMatchObject({
      event: 'auth.rate_limit.exceeded',
      limit: 'login_username',
      ip: '127.0.0.1',
      client_id: 'web',
      retry_after_seconds: 900,
      level: 30,
    });
    expect(JSON.stringify(trips)).not.toContain(ALICE.username);
  });
});

describe('failed sign-ins per IP', () => {
  let started: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    started = await startTestApp({
      seed: signInSeed(),
      env: { LOGIN_MAX_FAILURES_PER_USERNAME: '1000', LOGIN_MAX_FAILURES_PER_IP: '4' },
    });
  });
  afterAll(async () => {
    await started?.close();
  });

  it('refuses an address after 4 failures over any usernames; other addresses still sign in', async () => {
    for (const username of ['alice', 'bob', 'carol', 'dave']) {
      const { browser, page } = await openLoginPage(started.app, { remoteAddress: '203.0.113.7' });
      expect((await submitLogin(browser, page, username, 'guess')).statusCode).toBe(401);
    }
    const { browser, page } = await openLoginPage(started.app, { remoteAddress: '203.0.113.7' });
    const refused = await submitLogin(browser, page, ALICE.username, ALICE.password);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(800);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(900);
    expect(refused.body).toContain('Too many failed sign-in attempts');

    const elsewhere = await openLoginPage(started.app, { remoteAddress: '198.51.100.9' });
    expect(
      (await submitLogin(elsewhere.browser, elsewhere.page, ALICE.username, ALICE.password)).statusCode,
    ).toBe(303);
  });

  it('does not count successful sign-ins: many people behind one address are not locked out', async () => {
    for (let person = 0; person < 8; person++) {
      const { browser, page } = await openLoginPage(started.app, { remoteAddress: '192.0.2.50' });
      expect((await submitLogin(browser, page, BOB.username, BOB.password)).statusCode).toBe(303);
    }
  });

  it('counts parallel guesses before their passwords are checked: a burst cannot exceed the limit', async () => {
    const pages = await Promise.all(
      Array.from({ length: 10 }, () => openLoginPage(started.app, { remoteAddress: '192.0.2.99' })),
    );
    const answers = await Promise.all(
      pages.map(({ browser, page }, index) => submitLogin(browser, page, `user-${index}`, 'guess')),
    );
    const statuses = answers.map((answer) => answer.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(4);
    expect(statuses.filter((status) => status === 429)).toHaveLength(6);
  });
});

describe('token endpoint per client', () => {
  const logs = captureLogs();
  let database: TestDatabase;
  let first: Awaited<ReturnType<typeof startTestApp>>;
  let second: Awaited<ReturnType<typeof startTestApp>>;
  const env = { TOKEN_RATE_LIMIT_PER_MINUTE: '3', RATE_LIMIT_STORE: 'database' };

  beforeAll(async () => {
    database = await createTestDatabase();
    first = await startTestApp({ database, env, logger: logs.logger });
    second = await startTestApp({ database, env, logger: logs.logger });
  });
  afterAll(async () => {
    await first?.close();
    await second?.close();
    await database?.drop();
  });

  const clientCredentials = (
    app: typeof first.app,
    client = 'service',
    secret: string = TEST_SECRETS.service,
    remoteAddress = '127.0.0.1',
  ) =>
    app.inject({
      method: 'POST',
      url: '/token',
      remoteAddress,
      headers: { ...FORM, authorization: basicAuthorization(client, secret) },
      payload: 'grant_type=client_credentials&scope=orders.read',
    });

  it('with RATE_LIMIT_STORE=database the limit is shared: the 4th request of a minute, on either instance, is 429', async () => {
    expect((await clientCredentials(first.app)).statusCode).toBe(200);
    expect((await clientCredentials(second.app)).statusCode).toBe(200);
    expect((await clientCredentials(first.app)).statusCode).toBe(200);
    const limited = await clientCredentials(second.app);
    expect(limited.statusCode).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.headers['cache-control']).toBe('no-store');
    expect(limited.headers.pragma).toBe('no-cache');
    expect(limited.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(
        /^too many token requests for this client; retry in \d+ seconds$/,
      ),
    });
  });

  it('another client keeps its own budget', async () => {
    const web = await first.app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
      payload: 'grant_type=refresh_token&refresh_token=unknown',
    });
    expect(web.statusCode).toBe(400);
    expect(web.json().error).toBe('invalid_grant');
  });

  it("a wrong secret is counted against the caller's address, never against the client it names", async () => {
    const attacker = '198.51.100.66';
    for (let attempt = 0; attempt < 3; attempt++) {
      expect((await clientCredentials(first.app, 'web', 'wrong', attacker)).statusCode).toBe(401);
    }
    expect((await clientCredentials(first.app, 'web', 'wrong', attacker)).statusCode).toBe(429);
    const web = await first.app.inject({
      method: 'POST',
      url: '/token',
      remoteAddress: attacker,
      headers: { ...FORM, authorization: basicAuthorization('web', TEST_SECRETS.web) },
      payload: 'grant_type=refresh_token&refresh_token=unknown',
    });
    expect(web.statusCode).toBe(400);
  });

  it('writes auth.rate_limit.exceeded with the client id', () => {
    const trips = logs.events('auth.rate_limit.exceeded');
    expect(trips.some((trip) => trip.limit === 'token_client' && trip.client_id === 'service')).toBe(true);
  });
});

describe('token endpoint by default', () => {
  let started: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    started = await startTestApp();
  });
  afterAll(async () => {
    await started?.close();
  });

  it('is not limited (the benchmark drives one client at thousands of requests per second)', async () => {
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () =>
        started.app
          .inject({
            method: 'POST',
            url: '/token',
            headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
            payload: 'grant_type=client_credentials&scope=orders.read',
          })
          .then((response) => response.statusCode),
      ),
    );
    expect(new Set(statuses)).toEqual(new Set([200]));
  });
});

describe('login counters and the other rate-limit counters share one table', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  const loginRows = async () =>
    (
      (await database.handle.db.execute(
        "select count(*)::int as n from rate_limit_counters where key like 'login-%'",
      )) as unknown as { rows: Array<{ n: number }> }
    ).rows[0]!.n;

  it("the user-code store's sweep (ten 1-minute windows) leaves a 15-minute lock alone; the limiter sweeps its own ended windows", async () => {
    let now = 5_000_000_000;
    const limiter = createLoginAttemptLimiter(
      database.handle.db,
      { maxFailuresPerUsername: 2, maxFailuresPerIp: 0, windowSeconds: 900 },
      { nowMs: () => now },
    );
    const attempt = { ip: '192.0.2.1', username: 'alice' };
    for (const remaining of [1, 0]) {
      expect(await limiter.allow(attempt)).toEqual({ allowed: true, remaining, lockSeconds: 900 });
    }
    expect(await limiter.allow(attempt)).toMatchObject({ allowed: false, limit: 'username' });

    // Eleven minutes later a busy verification page sweeps its idle counters.
    now += 11 * 60_000;
    const Store = databaseRateLimitStore(database.handle.db, { nowMs: () => now });
    const store = new Store({});
    for (let index = 0; index < 100; index++) {
      await new Promise((resolve, reject) =>
        store.incr(
          `device-${index}`,
          (error, result) => (error ? reject(error) : resolve(result)),
          60_000,
          10,
        ),
      );
    }
    expect(await limiter.allow(attempt)).toMatchObject({ allowed: false, retryAfterSeconds: 240 });

    // Two windows later the limiter's own sweep removes the ended lock.
    now += 30 * 60_000;
    expect(await loginRows()).toBe(1);
    for (let index = 0; index < 100; index++) await limiter.allow({ ip: '192.0.2.1', username: `u${index}` });
    expect(await loginRows()).toBe(100);
  });
});

describe('the login lock is per person', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  const limiterOn = (db: TestDatabase['handle']['db']) =>
    createLoginAttemptLimiter(db, { maxFailuresPerUsername: 2, maxFailuresPerIp: 0, windowSeconds: 900 });

  it('counts a username under its canonical form: trimmed, spaces collapsed, case-folded', async () => {
    const limiter = limiterOn(database.handle.db);
    await limiter.allow({ ip: '192.0.2.1', username: 'grace hopper' });
    await limiter.allow({ ip: '192.0.2.1', username: '  Grace   HOPPER ' });
    expect(await limiter.allow({ ip: '192.0.2.1', username: 'GRACE\tHopper' })).toMatchObject({
      allowed: false,
      limit: 'username',
    });
  });

  it("counts an account's attempts under its stable id, whatever name found it, on every instance", async () => {
    // Two limiters on one database: two instances behind a load balancer.
    const [first, second] = [limiterOn(database.handle.db), limiterOn(database.handle.db)];
    await first.allowAccount({ ip: '192.0.2.1', username: 'linus' }, 'u-linus');
    await second.allowAccount({ ip: '192.0.2.1', username: 'linus@example.test' }, 'u-linus');
    expect(await first.allowAccount({ ip: '192.0.2.1', username: 'ltorvalds' }, 'u-linus')).toMatchObject({
      allowed: false,
      limit: 'account',
    });
    // A success clears the account's lock along with the name's.
    await second.recordSuccess({ ip: '192.0.2.1', username: 'linus' }, 'u-linus');
    expect(await first.allowAccount({ ip: '192.0.2.1', username: 'linus' }, 'u-linus')).toMatchObject({
      allowed: true,
    });
  });
});
