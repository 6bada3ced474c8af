import {
  createPostgresDatabase,
  type PgBouncer,
  POSTGRES_ADMIN_URL,
  startPgBouncer,
  withPostgresClient,
} from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBrowser } from '../src/http-browser.js';
import { type Instances, startInstances, WEB_TEST_REDIRECT_URI } from '../src/instances.js';
import { authorizationCode, ordersSignIn, redeemCode, refresh } from '../src/protocol-flows.js';

/**
 * Both apps through PgBouncer in transaction pooling mode (Debian's pgbouncer, 3 server
 * connections per database, in front of the shared PostgreSQL), two instances of each, with
 * `?pgbouncer=true` in DATABASE_URL: the instances migrate at start (a transaction-scoped lock,
 * taken together by both), a person signs in at the orders app (code exchange, server-side session),
 * refresh tokens rotate on every instance many times and concurrently (named prepared statements
 * sent unnamed: each execution may land on another server connection), orders are placed (their
 * statement timeout as SET LOCAL: PgBouncer refuses libpq's `options`). No advisory lock is left
 * held on the server afterwards.
 */

let pgbouncer: PgBouncer;
let stack: Instances;
const databases: Array<{ name: string; drop(): Promise<void> }> = [];

beforeAll(async () => {
  databases.push(await createPostgresDatabase('pgb_auth'), await createPostgresDatabase('pgb_orders'));
  pgbouncer = await startPgBouncer({ serverUrl: POSTGRES_ADMIN_URL });
  stack = await startInstances({
    authDatabaseUrl: pgbouncer.url(databases[0]!.name),
    ordersDatabaseUrl: pgbouncer.url(databases[1]!.name),
    authCount: 2,
    ordersCount: 2,
    authEnv: { LOG_LEVEL: 'warn' },
    ordersEnv: { LOG_LEVEL: 'warn' },
  });
}, 180_000);
afterAll(async () => {
  await stack?.stop();
  await pgbouncer?.stop();
  for (const database of databases) await database.drop();
});

const webTest = () => ({ id: 'web-test', secret: stack.secrets.webTestClientSecret });

async function signInTokens(at: string): Promise<string> {
  const code = await authorizationCode(new HttpBrowser(), {
    authorizeAt: at,
    clientId: 'web-test',
    redirectUri: WEB_TEST_REDIRECT_URI,
    scope: 'openid offline_access orders.read',
    user: stack.user,
  });
  const tokens = await redeemCode(at, webTest(), code, WEB_TEST_REDIRECT_URI);
  expect(tokens.status, tokens.text).toBe(200);
  return tokens.json.refresh_token as string;
}

describe('both apps behind PgBouncer in transaction pooling mode', () => {
  it('both migrated at start through it, under a lock that was released', async () => {
    for (const database of databases) {
      const url = `${POSTGRES_ADMIN_URL.replace(/\/[^/]*$/, '')}/${database.name}`;
      const { rows } = await withPostgresClient(url, (client) =>
        client.query<{ applied: number; locks: number }>(
          `select (select count(*)::int from drizzle.__drizzle_migrations) as applied,
                  (select count(*)::int from pg_locks where locktype = 'advisory'
                     and database = (select oid from pg_database where datname = current_database())) as locks`,
        ),
      );
      expect(rows[0]!.applied, database.name).toBeGreaterThan(0);
      expect(rows[0]!.locks, database.name).toBe(0);
    }
  });

  it('a person signs in at the orders app: code exchange and a session every instance reads', async () => {
    const browser = new HttpBrowser();
    const { callback } = await ordersSignIn(browser, {
      startAt: stack.ordersUrls[0]!,
      authAt: stack.authUrls[1]!,
      finishAt: stack.ordersUrls[1]!,
      user: stack.user,
    });
    expect(callback.status).toBe(303);
    for (const url of stack.ordersUrls) {
      const home = await browser.get(`${url}/`);
      expect(JSON.parse(home.body)).toMatchObject({ sub: stack.user.sub, hasAccessToken: true });
    }
  });

  it('refresh tokens rotate again and again on both instances, concurrently, each into one successor', async () => {
    const chains = await Promise.all(stack.authUrls.flatMap((url) => [signInTokens(url), signInTokens(url)]));
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(
        chains.map((token, index) => refresh(stack.authUrls[(index + round) % 2]!, webTest(), token)),
      );
      for (const [index, answer] of answers.entries()) {
        expect(answer.status, answer.text).toBe(200);
        chains[index] = answer.json.refresh_token as string;
      }
    }
  });

  it('orders are placed concurrently on both instances and read back', async () => {
    const placed = await Promise.all(
      Array.from({ length: 12 }, (_, index) =>
        fetch(`${stack.ordersUrls[index % 2]}/orders`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': stack.secrets.apiKey },
          body: JSON.stringify({ email: `pooled-${index % 4}@example.com`, quantity: 1 + (index % 3) }),
        }).then(async (response) => ({ status: response.status, body: await response.text() })),
      ),
    );
    for (const answer of placed) expect(answer.status, answer.body).toBe(201);
    const { id } = JSON.parse(placed[0]!.body) as { id: number };
    const read = await fetch(`${stack.ordersUrls[1]}/orders/${id}`, {
      headers: { 'x-api-key': stack.secrets.apiKey },
    });
    expect(read.status).toBe(200);
  });
});
