import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpBrowser } from '../src/http-browser.js';
import {
  basicAuthorization,
  type Instances,
  postForm,
  startInstances,
  WEB_TEST_REDIRECT_URI,
} from '../src/instances.js';
import { createFreshDatabase, type FreshDatabase } from '../src/postgres.js';
import { startNodeProcess } from '../src/processes.js';
import { authorizationCode, ordersSignIn, redeemCode, refresh } from '../src/protocol-flows.js';

/**
 * Backup and restore as docs/backup-and-restore.md describes it: `pg_dump --format=custom` of both
 * databases while the services run, `pg_restore` into fresh databases, the services started on them
 * with the same KEY_ENCRYPTION_KEY, secrets and seed file. What was true at the backup is true
 * again; what happened after it is lost, and the docs say what users see then.
 */

const run = promisify(execFile);
let original: { auth: FreshDatabase; orders: FreshDatabase };
let restored: { auth: FreshDatabase; orders: FreshDatabase };
let before: Instances;
let after: Instances;
let dumps: string;

/** What the first stack handed out before the backup. */
const issued = {} as {
  access: string;
  rotatedAfterBackup: string;
  revokedAccess: string;
  revokedRefresh: string;
  opaque: string;
  orderId: number;
  bffCookie: string;
};

const webTest = (stack: Instances) => ({ id: 'web-test', secret: stack.secrets.webTestClientSecret });

async function signIn(stack: Instances) {
  const code = await authorizationCode(new HttpBrowser(), {
    authorizeAt: stack.issuer,
    clientId: 'web-test',
    redirectUri: WEB_TEST_REDIRECT_URI,
    scope: 'openid email offline_access orders.read',
    user: stack.user,
  });
  const tokens = await redeemCode(stack.issuer, webTest(stack), code, WEB_TEST_REDIRECT_URI);
  expect(tokens.status).toBe(200);
  return tokens.json as { access_token: string; refresh_token: string };
}

const introspect = (stack: Instances, token: string, resource: 'orders-api' | 'reports-api' = 'orders-api') =>
  postForm(
    `${stack.issuer}/introspect`,
    { token },
    basicAuthorization(
      resource,
      resource === 'orders-api' ? stack.secrets.ordersApiSecret : stack.secrets.reportsApiSecret,
    ),
  );

async function issueBeforeBackup(stack: Instances) {
  const kept = await signIn(stack);
  issued.access = kept.access_token;
  const revoked = await signIn(stack);
  issued.revokedAccess = revoked.access_token;
  issued.revokedRefresh = revoked.refresh_token;
  // RFC 7009 §2.1: revoking a refresh token ends its grant, the access tokens with it.
  const revocation = await postForm(
    `${stack.issuer}/revoke`,
    { token: revoked.refresh_token, token_type_hint: 'refresh_token' },
    basicAuthorization('web-test', stack.secrets.webTestClientSecret),
  );
  expect(revocation.status).toBe(200);
  const machine = await postForm(
    `${stack.issuer}/token`,
    { grant_type: 'client_credentials', scope: 'reports.read' },
    basicAuthorization('worker', stack.secrets.workerClientSecret),
  );
  expect(machine.status).toBe(200);
  issued.opaque = machine.json.access_token as string;
  const order = await fetch(`${stack.ordersBaseUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': stack.secrets.apiKey },
    body: JSON.stringify({ email: stack.user.email, quantity: 2 }),
  });
  expect(order.status).toBe(201);
  issued.orderId = ((await order.json()) as { id: number }).id;
  const browser = new HttpBrowser();
  await ordersSignIn(browser, {
    startAt: stack.ordersBaseUrl,
    authAt: stack.issuer,
    finishAt: stack.ordersBaseUrl,
    user: stack.user,
  });
  issued.bffCookie = browser.cookie('__Host-orders-session')!;
  return kept.refresh_token;
}

async function dump(database: FreshDatabase, file: string) {
  await run('pg_dump', ['--format=custom', '--file', file, '--dbname', database.url]);
}

async function restore(file: string, into: FreshDatabase) {
  await run('pg_restore', ['--no-owner', '--exit-on-error', '--dbname', into.url, file]);
}

beforeAll(async () => {
  original = {
    auth: await createFreshDatabase('e2e_backup_auth'),
    orders: await createFreshDatabase('e2e_backup_orders'),
  };
  restored = {
    auth: await createFreshDatabase('e2e_restored_auth'),
    orders: await createFreshDatabase('e2e_restored_orders'),
  };
  dumps = await mkdtemp(join(tmpdir(), 'backup-'));
  before = await startInstances({
    authDatabaseUrl: original.auth.url,
    ordersDatabaseUrl: original.orders.url,
    authCount: 1,
    ordersCount: 1,
  });
  const refreshAtBackup = await issueBeforeBackup(before);
  // The backup, taken while both services run (pg_dump reads one consistent snapshot per database).
  await dump(original.auth, join(dumps, 'auth.dump'));
  await dump(original.orders, join(dumps, 'orders.dump'));
  // After the backup the client rotates its refresh token: the restore will not know the new one.
  const rotated = await refresh(before.issuer, webTest(before), refreshAtBackup);
  expect(rotated.status).toBe(200);
  issued.rotatedAfterBackup = rotated.json.refresh_token as string;
  await before.stop();
  await restore(join(dumps, 'auth.dump'), restored.auth);
  await restore(join(dumps, 'orders.dump'), restored.orders);
}, 240_000);
afterAll(async () => {
  await after?.stop();
  await before?.stop();
  for (const database of [original, restored].flatMap((pair) => (pair ? [pair.auth, pair.orders] : [])))
    await database.drop();
  if (dumps) await rm(dumps, { recursive: true, force: true });
});

describe('a pg_dump / pg_restore of both databases', () => {
  it('with another KEY_ENCRYPTION_KEY the auth server refuses to start, with one line', async () => {
    const wrong = startNodeProcess('auth-server-wrong-kek', 'apps/auth-server', 'src/server.ts', {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: '0',
      ISSUER: 'http://127.0.0.1:9',
      DATABASE_URL: restored.auth.url,
      KEY_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64url'),
      LOG_LEVEL: 'info',
    });
    expect(await wrong.exited).toBe(1);
    const complaints = wrong
      .output()
      .split('\n')
      .filter((line) => line.startsWith('auth-server: cannot start'));
    expect(complaints).toHaveLength(1);
    expect(complaints[0]).toMatch(
      /^auth-server: cannot start: KEY_ENCRYPTION_KEY cannot decrypt signing key \S+ stored in the database/,
    );
    expect(wrong.output()).not.toMatch(/^\s+at /m);
  });

  it('restored, with the same key, secrets and seed (applied again at start): what was valid is valid, what was revoked stays revoked', async () => {
    after = await startInstances({
      authDatabaseUrl: restored.auth.url,
      ordersDatabaseUrl: restored.orders.url,
      authCount: 1,
      ordersCount: 1,
      secrets: before.secrets,
      // The same public URL as before: tokens name their issuer (`iss`).
      issuerPort: before.gateway.port,
    });
    // Same signing keys: the JWT access token's kid is in the restored server's JWKS, and the
    // orders API (which verifies JWTs locally against that JWKS) accepts it.
    const kid = JSON.parse(Buffer.from(issued.access.split('.')[0]!, 'base64url').toString()).kid;
    const jwks = (await fetch(`${after.issuer}/jwks`).then((response) => response.json())) as {
      keys: Array<{ kid: string }>;
    };
    expect(jwks.keys.map((key) => key.kid)).toContain(kid);
    const listed = await fetch(`${after.ordersBaseUrl}/orders`, {
      headers: { authorization: `Bearer ${issued.access}` },
    });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: issued.orderId })]),
    );
    expect((await introspect(after, issued.access)).json).toMatchObject({
      active: true,
      sub: after.user.sub,
    });
    expect((await introspect(after, issued.opaque, 'reports-api')).json).toMatchObject({
      active: true,
      client_id: 'worker',
    });

    expect((await introspect(after, issued.revokedAccess)).json).toEqual({ active: false });
    const revokedRefresh = await refresh(after.issuer, webTest(after), issued.revokedRefresh);
    expect(revokedRefresh.status).toBe(400);
    expect(revokedRefresh.json.error).toBe('invalid_grant');

    // The orders database came back too: the BFF session signed in before the backup still works.
    const bff = await fetch(`${after.ordersBaseUrl}/bff/orders`, {
      headers: { 'x-csrf': '1', cookie: `__Host-orders-session=${issued.bffCookie}` },
    });
    expect(bff.status).toBe(200);
    // The seed applied again cleanly: the seeded user signs in on the restored server.
    await signIn(after);
  });

  it('loses what happened after the backup: a refresh token rotated since then is refused; signing in again works', async () => {
    const answer = await refresh(after.issuer, webTest(after), issued.rotatedAfterBackup);
    expect(answer.status).toBe(400);
    expect(answer.json.error).toBe('invalid_grant');
    const again = await signIn(after);
    expect((await refresh(after.issuer, webTest(after), again.refresh_token)).status).toBe(200);
  });
});
