import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_CREDENTIALS_MESSAGE } from '../src/routes/interaction/index.js';
import { startTestApp } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { ALICE, signInSeed } from './sign-in-fixtures.js';

/**
 * User enumeration (OWASP ASVS V2.2, V3.2): the login answer does not say whether a username
 * exists, neither in its text nor (roughly) in its timing, because an unknown user costs the same
 * scrypt run as a wrong password (`dummyPasswordVerify`). Passwords are stored with a salted,
 * slow KDF. A coarse check (means within 2× of each other), not a benchmark: without the dummy
 * run an unknown user answers ~50× faster and this fails.
 */

let started: Awaited<ReturnType<typeof startTestApp>>;
beforeAll(async () => {
  const seed = signInSeed();
  seed.users = [
    ...(seed.users ?? []),
    // Same password as alice: the stored hashes must still differ (salt).
    { sub: 'u-twin', username: 'twin', password: ALICE.password, name: 'Twin' },
  ];
  started = await startTestApp({
    seed,
    // The limits would refuse the repeated failures below; they are tested in rate-limits.test.ts.
    env: { LOGIN_MAX_FAILURES_PER_USERNAME: '0', LOGIN_MAX_FAILURES_PER_IP: '0' },
    // What a deployment stores (the dummy run for unknown users is always at this cost).
    seedPasswordCost: 'production',
  });
});
afterAll(async () => {
  await started?.close();
});

async function timedLogin(username: string, password: string) {
  const { browser, page } = await openLoginPage(started.app);
  const began = performance.now();
  const response = await submitLogin(browser, page, username, password);
  const elapsed = performance.now() - began;
  return { response, elapsed };
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

describe('login answers do not reveal whether a user exists', () => {
  it('same status and message for an unknown user and a wrong password', async () => {
    const unknown = await timedLogin('no-such-user', 'whatever');
    const wrong = await timedLogin(ALICE.username, 'whatever');
    for (const { response } of [unknown, wrong]) {
      expect(response.statusCode).toBe(401);
      expect(response.body).toContain(INVALID_CREDENTIALS_MESSAGE.replace('.', ''));
    }
    // Each attempt has its own interaction (and CSRF token), named in the page's links.
    const strip = (body: string) =>
      body
        .replace(/name="csrf" value="[^"]*"/, '')
        .replace(/(value|data-passkey-csrf|data-passkey-options)="[^"]*"/g, '')
        .replace(/\/interaction\/[^/"]+\//g, '/interaction/ID/');
    expect(strip(unknown.response.body)).toBe(strip(wrong.response.body));
  });

  it('comparable time: the mean of unknown-user logins is within 0.5–2× of wrong-password logins', async () => {
    // Warm up (JIT, the dummy hash computed once).
    await timedLogin('warm-up', 'x');
    await timedLogin(ALICE.username, 'x');
    const unknown: number[] = [];
    const wrong: number[] = [];
    // Interleaved, so a slow moment of a busy machine hits both series alike.
    for (let round = 0; round < 10; round++) {
      unknown.push((await timedLogin(`nobody-${round}`, 'guess')).elapsed);
      wrong.push((await timedLogin(ALICE.username, `guess-${round}`)).elapsed);
    }
    const ratio = mean(unknown) / mean(wrong);
    expect(
      ratio,
      `unknown ${mean(unknown).toFixed(1)} ms vs wrong ${mean(wrong).toFixed(1)} ms`,
    ).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});

describe('password storage', () => {
  it('scrypt with N=2^15, r=8, p=1 and a per-user salt: equal passwords have different hashes', async () => {
    const rows = (await started.database.handle.db.execute(
      "select username, password_hash from users where username in ('alice', 'twin') order by username",
    )) as unknown as { rows: Array<{ username: string; password_hash: string }> };
    const hashes = rows.rows.map((row) => row.password_hash);
    expect(hashes).toHaveLength(2);
    for (const hash of hashes) {
      expect(hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9_-]{22,}\$[A-Za-z0-9_-]{43,}$/);
      expect(hash).not.toContain(ALICE.password);
    }
    expect(hashes[0]).not.toBe(hashes[1]);
    expect(hashes[0]!.split('$')[4]).not.toBe(hashes[1]!.split('$')[4]);
  });
});
