import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBrowser } from '../src/http-browser.js';
import {
  basicAuthorization,
  type Instances,
  startOnPrivatePostgres,
  WEB_TEST_REDIRECT_URI,
} from '../src/instances.js';
import { type PrivatePostgres, withClient } from '../src/postgres.js';
import { authorizationCode, redeemCode, refresh } from '../src/protocol-flows.js';

/**
 * Database faults, on a PostgreSQL server of the test's own (initdb in a temporary folder, its own
 * port; never the shared server): it is stopped (fast shutdown, cutting every connection) while
 * the auth server and the orders service serve traffic. Readiness turns 503, liveness stays 200,
 * token and order requests fail fast with 503 and a clear JSON body (bounded by the pools' connect
 * timeouts: 3 s auth server, DATABASE_CONNECT_TIMEOUT_MS=2000 here for orders), never a 500. Once
 * the server is back, both processes recover by themselves, and no half-written order or grant is
 * left. Then an order blocked past the default 5 s transaction deadline rolls back completely.
 */

let postgres: PrivatePostgres;
let stack: Instances;
const refreshTokens: string[] = [];

beforeAll(async () => {
  ({ postgres, stack } = await startOnPrivatePostgres({ DATABASE_CONNECT_TIMEOUT_MS: '2000' }));
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await postgres?.destroy();
});

const auth = () => stack.authUrls[0]!;
const orders = () => stack.ordersUrls[0]!;
const webTest = () => ({ id: 'web-test', secret: stack.secrets.webTestClientSecret });

interface Outcome {
  what: string;
  status: number;
  ms: number;
  body: string;
  headers: Headers;
}

async function timed(what: string, send: () => Promise<Response>): Promise<Outcome> {
  const began = performance.now();
  try {
    const response = await send();
    return {
      what,
      status: response.status,
      ms: performance.now() - began,
      body: await response.text(),
      headers: response.headers,
    };
  } catch (error) {
    return { what, status: 0, ms: performance.now() - began, body: String(error), headers: new Headers() };
  }
}

let orderSequence = 0;
const placeOrder = () =>
  timed('POST /orders', () =>
    fetch(`${orders()}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': stack.secrets.apiKey },
      body: JSON.stringify({ email: `storm-${++orderSequence}@example.com`, quantity: 2 }),
      signal: AbortSignal.timeout(30_000),
    }),
  );
/** client_credentials with an opaque access token: one row written per token. */
const opaqueToken = () =>
  timed('POST /token', () =>
    fetch(`${auth()}/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basicAuthorization('worker', stack.secrets.workerClientSecret),
      },
      body: 'grant_type=client_credentials&scope=reports.read',
      signal: AbortSignal.timeout(30_000),
    }),
  );
const probe = (url: string) => timed(`GET ${url}`, () => fetch(url, { signal: AbortSignal.timeout(30_000) }));

/** 5xx answers are the documented JSON, never a 500 or a stack trace. */
function expectCleanFailure(outcome: Outcome) {
  expect(outcome.status, `${outcome.what}: ${outcome.body}`).not.toBe(500);
  expect(outcome.status, `${outcome.what}: ${outcome.body}`).not.toBe(0);
  expect(outcome.body).not.toMatch(/\n\s+at /);
  if (outcome.status === 503) {
    expect(outcome.headers.get('content-type')).toMatch(/^application\/json/);
    expect(outcome.headers.get('retry-after')).toBe('1');
  }
}

const storm = { placed: 0, tokens: 0 };

describe('a database outage while both apps serve traffic', () => {
  it('before: orders, tokens and user grants work', async () => {
    const browser = new HttpBrowser();
    for (let index = 0; index < 6; index++) {
      const code = await authorizationCode(browser, {
        authorizeAt: auth(),
        clientId: 'web-test',
        redirectUri: WEB_TEST_REDIRECT_URI,
        scope: 'openid offline_access orders.read',
        user: stack.user,
      });
      const tokens = await redeemCode(auth(), webTest(), code, WEB_TEST_REDIRECT_URI);
      expect(tokens.status).toBe(200);
      refreshTokens.push(tokens.json.refresh_token as string);
    }
    expect((await placeOrder()).status).toBe(201);
    expect((await opaqueToken()).status).toBe(200);
  });

  it('stopping it: readiness 503, liveness 200, tokens and orders 503 fast with a clear body, never 500', async () => {
    // Traffic in flight while the server goes down: some requests succeed, some are cut.
    let running = true;
    const outcomes: Outcome[] = [];
    const worker = async (send: () => Promise<Outcome>) => {
      while (running) outcomes.push(await send());
    };
    const workers = [worker(placeOrder), worker(placeOrder), worker(opaqueToken), worker(opaqueToken)];
    const refreshesInFlight = Promise.all(
      refreshTokens.slice(0, 3).map((token) =>
        timed('refresh', async () => {
          const answer = await refresh(auth(), webTest(), token);
          return new Response(answer.text, { status: answer.status, headers: answer.headers });
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    await postgres.stop();
    const stoppedAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    running = false;
    await Promise.all(workers);
    outcomes.push(...(await refreshesInFlight));

    for (const outcome of outcomes) {
      expect([200, 201, 503]).toContain(outcome.status);
      expectCleanFailure(outcome);
    }
    storm.placed = outcomes.filter(
      (outcome) => outcome.what === 'POST /orders' && outcome.status === 201,
    ).length;
    storm.tokens = outcomes.filter(
      (outcome) => outcome.what === 'POST /token' && outcome.status === 200,
    ).length;
    expect(outcomes.some((outcome) => outcome.status === 503)).toBe(true);
    expect(performance.now() - stoppedAt).toBeLessThan(15_000);

    // Now the database is down for good: every answer below is a fast, clean 503 (or 200 for liveness).
    for (const [url, expected] of [
      [`${auth()}/health/ready`, 503],
      [`${orders()}/health/ready`, 503],
      [`${auth()}/health/live`, 200],
      [`${orders()}/health/live`, 200],
    ] as const) {
      const outcome = await probe(url);
      expect(outcome.status, url).toBe(expected);
      expect(outcome.ms, url).toBeLessThan(2000);
    }

    const token = await opaqueToken();
    expect(token.status).toBe(503);
    expect(JSON.parse(token.body)).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.stringContaining('temporarily unavailable'),
    });
    expect(token.headers.get('cache-control')).toBe('no-store');
    expect(token.ms).toBeLessThan(5000);

    const order = await placeOrder();
    expect(order.status).toBe(503);
    expect(JSON.parse(order.body)).toEqual({
      statusCode: 503,
      message: 'The database is temporarily unavailable; retry later',
    });
    expect(order.ms).toBeLessThan(5000);

    const refreshed = await timed('refresh', async () => {
      const answer = await refresh(auth(), webTest(), refreshTokens[5]!);
      return new Response(answer.text, { status: answer.status, headers: answer.headers });
    });
    expect(refreshed.status).toBe(503);
    expect(refreshed.ms).toBeLessThan(5000);
    for (const outcome of [token, order, refreshed]) expectCleanFailure(outcome);

    // A person starting a sign-in gets a page saying so, not an error with a stack.
    const signInPage = await timed('GET /authorize', () =>
      fetch(
        `${auth()}/authorize?${new URLSearchParams({
          response_type: 'code',
          client_id: 'web-test',
          redirect_uri: WEB_TEST_REDIRECT_URI,
          scope: 'openid',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        })}`,
        { redirect: 'manual', signal: AbortSignal.timeout(30_000) },
      ),
    );
    expect(signInPage.status).toBe(503);
    expect(signInPage.headers.get('content-type')).toMatch(/^text\/html/);
    expect(signInPage.body).toContain('temporarily unavailable');
    expect(signInPage.body).not.toMatch(/\n\s+at /);
    expect(signInPage.ms).toBeLessThan(5000);

    expect(stack.auth[0]!.child.exitCode).toBeNull();
    expect(stack.orders[0]!.child.exitCode).toBeNull();
  });

  it('once the server is back, both apps recover without a restart', async () => {
    await postgres.start();
    const deadline = Date.now() + 30_000;
    for (const url of [`${auth()}/health/ready`, `${orders()}/health/ready`]) {
      for (;;) {
        if ((await probe(url)).status === 200) break;
        if (Date.now() > deadline) throw new Error(`${url} did not recover:\n${stack.logs()}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    expect((await placeOrder()).status).toBe(201);
    expect((await opaqueToken()).status).toBe(200);
    // A refresh token that was never presented still works.
    expect((await refresh(auth(), webTest(), refreshTokens[4]!)).status).toBe(200);
    expect(stack.auth[0]!.child.exitCode).toBeNull();
    expect(stack.orders[0]!.child.exitCode).toBeNull();
  });

  it('no half-written order or grant exists afterwards', async () => {
    await withClient(postgres.url('orders'), async (client) => {
      // Placing an order writes the user and the order in one transaction: a user without orders
      // would be half an order.
      const orphans = await client.query(
        'select count(*)::int as n from users u where not exists (select 1 from orders o where o.user_id = u.id)',
      );
      expect(orphans.rows[0].n).toBe(0);
      const placed = await client.query(
        "select count(*)::int as n from orders o join users u on u.id = o.user_id where u.email like 'storm-%'",
      );
      // Every 201 is stored; a request cut at COMMIT may be stored without its answer, never half.
      expect(placed.rows[0].n).toBeGreaterThanOrEqual(storm.placed + 2);
      const badTotals = await client.query(
        'select count(*)::int as n from orders where total <> quantity * 9.99',
      );
      expect(badTotals.rows[0].n).toBe(0);
    });
    await withClient(postgres.url('auth'), async (client) => {
      // A refresh marks the presented token used and writes its successor in one transaction.
      const brokenChains = await client.query(
        `select count(*)::int as n from refresh_tokens r
          where r.used_at is not null
            and not exists (select 1 from refresh_tokens c where c.parent_hash = r.token_hash)`,
      );
      expect(brokenChains.rows[0].n).toBe(0);
      // A code redemption writes the grant's first refresh token with the code's consumption.
      const emptyGrants = await client.query(
        `select count(*)::int as n from grants g
          where not exists (select 1 from refresh_tokens r where r.grant_id = g.id)
            and not exists (select 1 from authorization_codes c where c.grant_id = g.id and c.used_at is null)`,
      );
      expect(emptyGrants.rows[0].n).toBe(0);
      const tokens = await client.query(
        "select count(*)::int as n from access_tokens where client_id = 'worker'",
      );
      expect(tokens.rows[0].n).toBeGreaterThanOrEqual(storm.tokens + 2);
    });
  });
});

describe('the order transaction deadline on a real server', () => {
  it('an order blocked past the default 5 s (ORDER_TX_TIMEOUT_MS) answers 503 and leaves nothing behind', async () => {
    const email = 'locked@example.com';
    await withClient(postgres.url('orders'), async (locker) => {
      // Another session inserts the same user and keeps its transaction open: the order's
      // upsert of that e-mail waits on the unique index until statement_timeout cancels it.
      await locker.query('begin');
      await locker.query('insert into users (email) values ($1)', [email]);
      const outcome = await timed('POST /orders', () =>
        fetch(`${orders()}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': stack.secrets.apiKey },
          body: JSON.stringify({ email, quantity: 1 }),
          signal: AbortSignal.timeout(30_000),
        }),
      );
      await locker.query('rollback');
      expect(outcome.status).toBe(503);
      expect(JSON.parse(outcome.body)).toEqual({
        statusCode: 503,
        message: 'The database did not complete the write within 5000 ms; nothing was stored, retry later',
      });
      expect(outcome.ms).toBeGreaterThanOrEqual(4900);
      expect(outcome.ms).toBeLessThan(15_000);
    });
    await withClient(postgres.url('orders'), async (client) => {
      const rows = await client.query(
        'select (select count(*)::int from users where email = $1) as users, (select count(*)::int from orders o join users u on u.id = o.user_id where u.email = $1) as orders',
        [email],
      );
      expect(rows.rows[0]).toEqual({ users: 0, orders: 0 });
    });
  }, 60_000);
});
