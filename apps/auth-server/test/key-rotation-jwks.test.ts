import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningKeys } from '../src/keys/rotation.js';
import {
  basicAuthorization,
  FORM,
  form,
  startTestApp,
  TEST_ISSUER,
  TEST_KEY_ENCRYPTION_KEY,
  type TestApp,
  testConfig,
} from './helpers/app.js';
import type { TestDatabase } from './helpers/database.js';
import { webClientTokens } from './helpers/flows.js';
import { ORDERS_API, TEST_SECRETS } from './helpers/seed.js';

/**
 * Key rotation with two instances on one database: tokens signed before, during (new key published,
 * not yet signing) and after the rotation all verify through the published JWKS, at either
 * instance, until every token an old key signed has expired.
 */

const clock = createTestClock(Math.floor(Date.now() / 1000));
let first: { app: TestApp; database: TestDatabase; close(): Promise<void> };
let second: { app: TestApp; close(): Promise<void> };

beforeAll(async () => {
  first = await startTestApp({ clock });
  second = await startTestApp({ clock, database: { ...first.database, drop: async () => {} } });
});
afterAll(async () => {
  await second.close();
  await first.close();
});

interface Signed {
  token: string;
  kid: string | undefined;
  /** When it was signed, for checking it later within its lifetime. */
  at: number;
}

async function accessToken(app: TestApp): Promise<Signed> {
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
    payload: form({ grant_type: 'client_credentials', scope: 'orders.read' }),
  });
  const token = response.json().access_token as string;
  return { token, kid: decodeProtectedHeader(token).kid, at: clock.nowSeconds() };
}

async function idToken(app: TestApp): Promise<Signed> {
  const token = String((await webClientTokens(app, 'openid profile')).id_token);
  return { token, kid: decodeProtectedHeader(token).kid, at: clock.nowSeconds() };
}

async function jwksOf(app: TestApp): Promise<JSONWebKeySet> {
  return (await app.inject({ method: 'GET', url: '/jwks' })).json();
}

/** What a relying party or API does: verify through the JWKS it fetched, at the token's time. */
async function verifiesThrough(jwks: JSONWebKeySet, signed: Signed): Promise<boolean> {
  try {
    await jwtVerify(signed.token, createLocalJWKSet(jwks), {
      issuer: TEST_ISSUER,
      currentDate: new Date((signed.at + 1) * 1000),
    });
    return true;
  } catch {
    return false;
  }
}

/** Each instance's periodic key refresh (every 60 s in production), run now. */
async function refreshBoth() {
  await first.app.keyRing.reloadKeys();
  await second.app.keyRing.reloadKeys();
}

describe('key rotation across two instances', () => {
  const signed: Record<string, Signed[]> = { before: [], during: [], after: [] };
  let rotation: Awaited<ReturnType<typeof rotateSigningKeys>>;

  it('signs with the same keys at both instances before the rotation', async () => {
    signed.before!.push(await accessToken(first.app), await idToken(second.app));
    expect(await jwksOf(first.app)).toEqual(await jwksOf(second.app));
  });

  it('publishes the new keys everywhere before they sign', async () => {
    rotation = await rotateSigningKeys(first.app.database.db, testConfig().keyEncryptionKey, clock, {
      activateInSeconds: 600,
      keepPublishedSeconds: 3600,
    });
    await refreshBoth();
    clock.advance(300);
    signed.during!.push(await accessToken(second.app), await idToken(first.app));
    const newKids = rotation.added.map((key) => key.kid);
    for (const app of [first.app, second.app]) {
      const kids = (await jwksOf(app)).keys.map((key) => key.kid);
      for (const kid of newKids) expect(kids).toContain(kid);
    }
    // Still signed by the old keys.
    for (const token of signed.during!) expect(newKids).not.toContain(token.kid);
  });

  it('signs with the new keys once they activate', async () => {
    clock.advance(301);
    signed.after!.push(await accessToken(first.app), await idToken(second.app));
    const newKids = rotation.added.map((key) => key.kid);
    for (const token of signed.after!) expect(newKids).toContain(token.kid);
  });

  it('verifies every token of every phase through the JWKS of either instance', async () => {
    for (const app of [first.app, second.app]) {
      const jwks = await jwksOf(app);
      for (const token of [...signed.before!, ...signed.during!, ...signed.after!]) {
        expect(await verifiesThrough(jwks, token)).toBe(true);
      }
    }
  });

  it('keeps the old keys published until every token they signed has expired, then drops them', async () => {
    // ID tokens (3600 s) are the longest-lived tokens the old keys signed: still published now…
    clock.advance(3000);
    expect(await verifiesThrough(await jwksOf(second.app), signed.during![1]!)).toBe(true);
    // …and gone once the retired keys pass remove_after (activation + 3600 s).
    clock.advance(700);
    const jwks = await jwksOf(second.app);
    expect(jwks.keys.map((key) => key.kid).sort()).toEqual(rotation.added.map((key) => key.kid).sort());
    for (const token of signed.after!) expect(await verifiesThrough(jwks, token)).toBe(true);
  });

  it('an instance that has not refreshed yet reloads the keys when a token names an unknown kid', async () => {
    // Another rotation, activated at once (--force), seen only by the first instance.
    const next = await rotateSigningKeys(first.app.database.db, testConfig().keyEncryptionKey, clock, {
      activateInSeconds: 0,
      keepPublishedSeconds: 3600,
    });
    await first.app.keyRing.reloadKeys();
    clock.advance(11);
    const token = await accessToken(first.app);
    expect(next.added.map((key) => key.kid)).toContain(token.kid);
    const introspection = await second.app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, authorization: basicAuthorization(ORDERS_API, TEST_SECRETS.ordersApi) },
      payload: form({ token: token.token }),
    });
    expect(introspection.json().active).toBe(true);
  });
});

describe('keys rotate (the operator command)', () => {
  const run = promisify(execFile);
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'auth-keys-'));
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  const keys = (args: string[]) =>
    run(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], {
      cwd: join(import.meta.dirname, '..'),
      env: {
        ...process.env,
        DATABASE_URL: `pglite://${join(directory, 'db')}`,
        KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
        METADATA_MAX_AGE: '300',
      },
    });

  it('refuses a publish delay shorter than the JWKS cache lifetime plus the refresh interval', async () => {
    const failure = await keys(['rotate', '--activate-in', '100']).catch((error) => error);
    expect(failure.code).toBe(1);
    expect(failure.stderr).toContain('use at least 360');
  });

  it('adds an RS256 and an ES256 key that activate later, and lists them', async () => {
    const { stdout } = await keys(['rotate', '--publish-delay', '400']);
    expect(stdout).toMatch(/^added \S+ \(RS256, activates .+\), \S+ \(ES256, activates .+\)/);
    const listed = await keys(['list']);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
  });
});
