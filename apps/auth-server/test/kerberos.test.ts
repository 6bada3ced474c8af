/**
 * Kerberos configuration, keytab reading, seed member and principal mapping: the parts that need
 * no KDC, so they run on every machine (with or without libkrb5-dev). The SPNEGO exchange itself
 * is tested against a real MIT KDC in e2e/test/kerberos.test.ts and kerberos-browser.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { User } from '@oidc-orders/oauth-core';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.js';
import { hostBasedServiceName } from '../src/kerberos/gssapi-acceptor.js';
import {
  KeytabError,
  keytabPath,
  parseKeytabPrincipals,
  readKeytabPrincipals,
} from '../src/kerberos/keytab.js';
import { userForPrincipal, usernameByRealmRule } from '../src/kerberos/principal-mapping.js';
import { findSubByKerberosPrincipal } from '../src/kerberos/principal-repository.js';
import { DIRECTORY_UNAVAILABLE_MESSAGE } from '../src/routes/interaction/methods/directory-password.js';
import { kerberosSignInRoutes, negotiateToken } from '../src/routes/interaction/methods/kerberos.js';
import { parseSeedDocument, SeedError } from '../src/seed.js';
import { startTestApp, testConfig } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

const appDir = fileURLToPath(new URL('..', import.meta.url));

/** One keytab entry in MIT's version 2 format (doc/formats/keytab_file_format.rst). */
function keytabEntry(components: string[], realm: string): Buffer {
  const counted = (text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const count = Buffer.alloc(2);
  count.writeUInt16BE(components.length);
  const tail = Buffer.alloc(4 + 4 + 1 + 2 + 2 + 32 + 4);
  tail.writeUInt32BE(1, 0); // KRB5_NT_PRINCIPAL
  tail.writeUInt32BE(1_700_000_000, 4);
  tail.writeUInt8(2, 8);
  tail.writeUInt16BE(18, 9); // aes256-cts-hmac-sha1-96
  tail.writeUInt16BE(32, 11);
  const body = Buffer.concat([count, counted(realm), ...components.map(counted), tail]);
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

const keytab = (...entries: Buffer[]) => Buffer.concat([Buffer.from([0x05, 0x02]), ...entries]);

describe('configuration', () => {
  it('leaves Kerberos off unless KRB5_KTNAME is set', () => {
    expect(testConfig().kerberos).toBeNull();
    expect(testConfig({ KRB5_KTNAME: '/etc/auth.keytab' }).kerberos).toEqual({
      keytab: '/etc/auth.keytab',
      servicePrincipal: null,
      usernameRealm: null,
    });
    expect(
      testConfig({
        KRB5_KTNAME: 'FILE:/etc/auth.keytab',
        KERBEROS_SERVICE_PRINCIPAL: 'HTTP/sso.example.test@EXAMPLE.TEST',
        KERBEROS_USERNAME_REALM: 'EXAMPLE.TEST',
      }).kerberos,
    ).toEqual({
      keytab: 'FILE:/etc/auth.keytab',
      servicePrincipal: 'HTTP/sso.example.test@EXAMPLE.TEST',
      usernameRealm: 'EXAMPLE.TEST',
    });
  });

  it('refuses Kerberos settings without a keytab, and a malformed service principal', () => {
    expect(() => testConfig({ KERBEROS_SERVICE_PRINCIPAL: 'HTTP/sso@EXAMPLE.TEST' })).toThrow(ConfigError);
    expect(() => testConfig({ KERBEROS_USERNAME_REALM: 'EXAMPLE.TEST' })).toThrow(/KRB5_KTNAME is required/);
    expect(() => testConfig({ KRB5_KTNAME: '/k', KERBEROS_SERVICE_PRINCIPAL: 'alice@EXAMPLE.TEST' })).toThrow(
      /KERBEROS_SERVICE_PRINCIPAL is invalid/,
    );
  });

  it('turns HTTP/host@REALM into the GSSAPI host-based service name', () => {
    expect(hostBasedServiceName('HTTP/sso.example.test@EXAMPLE.TEST')).toBe('HTTP@sso.example.test');
    expect(hostBasedServiceName('HTTP/localhost')).toBe('HTTP@localhost');
  });
});

describe('keytab', () => {
  it('lists the distinct principals of a version 2 keytab, skipping holes', () => {
    const hole = Buffer.alloc(4 + 8);
    hole.writeInt32BE(-8);
    const bytes = keytab(
      keytabEntry(['HTTP', 'sso.example.test'], 'EXAMPLE.TEST'),
      hole,
      keytabEntry(['HTTP', 'sso.example.test'], 'EXAMPLE.TEST'),
      keytabEntry(['HTTP', 'localhost'], 'OTHER.TEST'),
    );
    expect(parseKeytabPrincipals(bytes)).toEqual([
      'HTTP/sso.example.test@EXAMPLE.TEST',
      'HTTP/localhost@OTHER.TEST',
    ]);
  });

  it('recognises what is not a keytab', () => {
    expect(parseKeytabPrincipals(Buffer.from('{"not":"a keytab"}'))).toBeNull();
    expect(parseKeytabPrincipals(keytab(keytabEntry(['HTTP', 'x'], 'R')).subarray(0, 20))).toBeNull();
  });

  it('accepts FILE: and WRFILE: names and refuses other keytab types', () => {
    expect(keytabPath('/etc/krb5.keytab')).toBe('/etc/krb5.keytab');
    expect(keytabPath('FILE:/etc/krb5.keytab')).toBe('/etc/krb5.keytab');
    expect(keytabPath('WRFILE:/etc/krb5.keytab')).toBe('/etc/krb5.keytab');
    expect(() => keytabPath('MEMORY:x')).toThrow(KeytabError);
  });

  it('fails with one line naming the variable when the keytab is missing, empty or not a keytab', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'auth-keytab-'));
    await writeFile(join(directory, 'empty.keytab'), Buffer.from([0x05, 0x02]));
    await writeFile(join(directory, 'text.keytab'), 'hello');
    await expect(readKeytabPrincipals(join(directory, 'missing.keytab'))).rejects.toThrow(
      /^KRB5_KTNAME is invalid: cannot read the keytab .*missing\.keytab \(ENOENT\)$/,
    );
    await expect(readKeytabPrincipals(join(directory, 'empty.keytab'))).rejects.toThrow(/holds no keys$/);
    await expect(readKeytabPrincipals(join(directory, 'text.keytab'))).rejects.toThrow(
      /is not a version 2 keytab$/,
    );
  });
});

describe('start-up', () => {
  it('with an unreadable keytab, exits 1 after one line on stderr', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        cwd: appDir,
        env: {
          PATH: process.env.PATH ?? '',
          NODE_ENV: 'test',
          LOG_LEVEL: 'silent',
          PORT: '0',
          HOST: '127.0.0.1',
          DATABASE_URL: 'pglite://memory',
          KRB5_KTNAME: '/nonexistent/auth-server.keytab',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr });
      });
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'auth-server: cannot start: KRB5_KTNAME is invalid: cannot read the keytab /nonexistent/auth-server.keytab (ENOENT)\n',
    );
  }, 120_000);
});

describe('seed member kerberos_principal', () => {
  const withUsers = (users: unknown[]) => ({ ...testSeed(), users });
  const user = (sub: string, extra: Record<string, unknown> = {}) => ({
    sub,
    username: sub,
    password: 'a-password-for-tests',
    ...extra,
  });

  it('must be name@REALM and name one user only', () => {
    expect(() => parseSeedDocument(withUsers([user('a', { kerberos_principal: 'alice' })]))).toThrow(
      SeedError,
    );
    expect(() =>
      parseSeedDocument(
        withUsers([
          user('a', { kerberos_principal: 'alice@EXAMPLE.TEST' }),
          user('b', { kerberos_principal: 'alice@EXAMPLE.TEST' }),
        ]),
      ),
    ).toThrow(/duplicate kerberos_principal/);
  });

  it('is stored exactly, and a later seed without it removes it', async () => {
    const seed = parseSeedDocument(
      withUsers([user('u-alice', { kerberos_principal: 'alice@EXAMPLE.TEST' })]),
    );
    const { app, database, close } = await startTestApp({ seed });
    try {
      const db = app.database.db;
      expect(await findSubByKerberosPrincipal(db, 'alice@EXAMPLE.TEST')).toBe('u-alice');
      expect(await findSubByKerberosPrincipal(db, 'ALICE@EXAMPLE.TEST')).toBeNull();
      expect(await findSubByKerberosPrincipal(db, 'alice@OTHER.TEST')).toBeNull();
      await app.close();
      const again = await startTestApp({ seed: parseSeedDocument(withUsers([user('u-alice')])), database });
      expect(await findSubByKerberosPrincipal(again.app.database.db, 'alice@EXAMPLE.TEST')).toBeNull();
      await again.app.close();
    } finally {
      await close().catch(() => {});
    }
  }, 120_000);
});

describe('principal → user', () => {
  const alice = { sub: 'u-alice', username: 'alice' } as User;
  const bob = { sub: 'u-bob', username: 'bob' } as User;
  const deps = (usernameRealm: string | null) => ({
    users: {
      findUserBySub: async (sub: string) => [alice, bob].find((user) => user.sub === sub) ?? null,
      findUserByUsername: async (name: string) => [alice, bob].find((user) => user.username === name) ?? null,
    },
    findSubByPrincipal: async (principal: string) => (principal === 'a.smith@CORP.TEST' ? 'u-alice' : null),
    usernameRealm,
  });

  it('maps the seed principal exactly; the realm rule is off by default', async () => {
    expect(await userForPrincipal('a.smith@CORP.TEST', deps(null))).toBe(alice);
    expect(await userForPrincipal('bob@CORP.TEST', deps(null))).toBeNull();
  });

  it('with KERBEROS_USERNAME_REALM maps name@REALM to the username, never another realm or an instance', async () => {
    expect(await userForPrincipal('bob@CORP.TEST', deps('CORP.TEST'))).toBe(bob);
    expect(await userForPrincipal('bob@OTHER.TEST', deps('CORP.TEST'))).toBeNull();
    expect(usernameByRealmRule('bob/admin@CORP.TEST', 'CORP.TEST')).toBeNull();
    expect(usernameByRealmRule('@CORP.TEST', 'CORP.TEST')).toBeNull();
  });
});

describe('Negotiate header', () => {
  it('takes the token of "Negotiate <base64>" and nothing else', () => {
    expect(negotiateToken('Negotiate YIIBhgYGKwYBBQUCoA==')).toBe('YIIBhgYGKwYBBQUCoA==');
    expect(negotiateToken('negotiate abc')).toBe('abc');
    expect(negotiateToken('Basic YWxpY2U6cHc=')).toBeNull();
    expect(negotiateToken('Negotiate')).toBeNull();
    expect(negotiateToken(undefined)).toBeNull();
  });
});

/**
 * The route with a stand-in for the KDC side (the acceptor always accepts `jdoe@CORP.TEST`; the
 * real exchange is e2e/test/kerberos*.test.ts) and the mapping's outcome given: what each outcome
 * shows. The directory's own `unavailable` is tested against a stopped slapd
 * (directory-sign-in.test.ts).
 */
async function kerberosRouteWith(outcome: User | null | 'unavailable') {
  const app = Fastify();
  await app.register(kerberosSignInRoutes<string>(), {
    acceptor: {
      servicePrincipals: ['HTTP/sso.corp.test@CORP.TEST'],
      accept: async () => ({ principal: 'jdoe@CORP.TEST', mutualToken: null }),
    },
    userForPrincipal: async () => outcome,
    replay: { markUsed: async () => true },
    nowSeconds: () => 1_700_000_000,
    steps: {
      loaded: () => 'interaction',
      clientIdOf: () => 'web',
      showLoginPage: async (reply, _loaded, status, message) =>
        reply.code(status).send({ page: 'login', message }),
      signedIn: async (_request, reply, _loaded, user) => reply.code(303).send({ signedIn: user.sub }),
    },
    pageContext: { issuer: 'http://127.0.0.1', basePath: '' },
  });
  const response = await app.inject({
    url: '/interaction/i-1/kerberos',
    headers: { authorization: 'Negotiate YIIBhgYGKwYBBQUCoA==' },
  });
  await app.close();
  return response;
}

describe('Kerberos route outcomes', () => {
  it('directory down for a principal only it could map: the login form with the unavailable message (503)', async () => {
    const response = await kerberosRouteWith('unavailable');
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('30');
    expect(response.json()).toEqual({ page: 'login', message: DIRECTORY_UNAVAILABLE_MESSAGE });
  });

  it('an unknown principal: "not registered here" (403); a known one signs in', async () => {
    const unknown = await kerberosRouteWith(null);
    expect(unknown.statusCode).toBe(403);
    expect(unknown.body).toContain('jdoe@CORP.TEST has no account');
    const known = await kerberosRouteWith({ sub: 'u-jdoe', username: 'jdoe' } as User);
    expect(known.statusCode).toBe(303);
    expect(known.json()).toEqual({ signedIn: 'u-jdoe' });
  });
});

describe('login page without Kerberos', () => {
  it('has no Kerberos link (the page is as before)', async () => {
    const { app, close } = await startTestApp();
    try {
      const authorize = await app.inject({
        method: 'GET',
        url: '/authorize?response_type=code&client_id=web&redirect_uri=https%3A%2F%2Fweb.example.test%2Fcallback&scope=openid&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256',
      });
      const login = await app.inject({
        method: 'GET',
        url: authorize.headers.location as string,
        cookies: Object.fromEntries(authorize.cookies.map((cookie) => [cookie.name, cookie.value])),
      });
      expect(login.statusCode).toBe(200);
      expect(login.body).toContain('name="password"');
      expect(login.body).not.toContain('data-sign-in="kerberos"');
      expect(login.body).not.toMatch(/<form[^>]* action=/);
    } finally {
      await close();
    }
  }, 120_000);
});
