import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityProviders } from '../src/db/schema.js';
import { resolveProvider } from '../src/federation/registry.js';
import {
  type SeedDocument,
  type SeedIdentityProvider,
  SeedIdentityProviderSchema,
} from '../src/schemas/seed.js';
import { parseSeedDocument, SeedError } from '../src/seed.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

/**
 * The seed member `identity_providers` (docs/upstream-providers.md): its rules fail the
 * start with one line naming the entry and member; the file is the truth, so a provider it no longer
 * names is disabled in the shared table (every instance hides its button).
 */

const GOOD: SeedIdentityProvider = {
  id: 'corp',
  issuer: 'https://login.example.test/tenant',
  client_id: 'our-server',
  client_secret: 'secret-for-tests',
  scope: 'openid email profile',
  display_name: 'Corp',
};

const withProviders = (providers: unknown[]): unknown => ({ ...testSeed(), identity_providers: providers });

const problemOf = (providers: unknown[]) => {
  try {
    parseSeedDocument(withProviders(providers));
    return null;
  } catch (error) {
    expect(error).toBeInstanceOf(SeedError);
    return (error as Error).message;
  }
};

describe('identity_providers rules', () => {
  it('accepts a provider with a secret by value', () => {
    expect(problemOf([GOOD])).toBeNull();
  });

  it.each([
    [
      { ...GOOD, issuer: 'http://login.example.test' },
      'identity_providers[0] (corp).issuer: must be an https URL',
    ],
    [
      { ...GOOD, issuer: 'https://login.example.test/?x=1' },
      'identity_providers[0] (corp).issuer: must have no query',
    ],
    [
      { ...GOOD, client_secret: undefined },
      'identity_providers[0] (corp): give exactly one of client_secret or client_secret_file',
    ],
    [
      { ...GOOD, client_secret_file: '/run/secrets/x' },
      'identity_providers[0] (corp): give exactly one of client_secret or client_secret_file',
    ],
    [
      { ...GOOD, token_endpoint_auth_method: 'private_key_jwt', client_secret: undefined },
      'identity_providers[0] (corp).private_key_file: is required with private_key_jwt',
    ],
    [{ ...GOOD, scope: 'email profile' }, 'identity_providers[0].scope'],
    [{ ...GOOD, id: 'Has Spaces' }, 'identity_providers[0].id'],
    [{ ...GOOD, surprise: true }, 'identity_providers[0].surprise: unknown member "surprise"'],
  ])('refuses %j', (provider, message) => {
    expect(problemOf([provider])).toContain(message);
  });

  it('the documented example (docs/upstream-providers.md) marks every member the schema requires as required', () => {
    const readme = readFileSync(new URL('../../../docs/upstream-providers.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('# Upstream identity providers'));
    const example = /```jsonc\n"identity_providers": \[([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const lineOf = (member: string) => example.split('\n').find((line) => line.includes(`"${member}":`));
    const required = [...(SeedIdentityProviderSchema.required ?? [])];
    expect(required).toEqual(expect.arrayContaining(['id', 'issuer', 'client_id', 'scope', 'display_name']));
    for (const member of required) expect(lineOf(member), member).toMatch(/\/\/ required\b/);
  });

  it('refuses two providers with one id (the id names the callback URL)', () => {
    expect(problemOf([GOOD, { ...GOOD, display_name: 'Again' }])).toContain(
      'identity_providers[1] (corp): duplicate id',
    );
  });

  it('accepts http only on a loopback issuer', () => {
    expect(problemOf([{ ...GOOD, issuer: 'http://127.0.0.1:9000' }])).toBeNull();
  });
});

describe('secrets and keys from files', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'idp-seed-'));
  });
  afterAll(() => rm(folder, { recursive: true, force: true }));

  it('reads client_secret_file without its trailing newline, and a private_key_jwt key', async () => {
    await writeFile(join(folder, 'secret'), 'from-a-file\n');
    const fromFile = await resolveProvider({
      ...GOOD,
      client_secret: undefined,
      client_secret_file: join(folder, 'secret'),
    });
    expect(fromFile.clientSecret).toBe('from-a-file');
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(join(folder, 'key.pem'), privateKey.export({ format: 'pem', type: 'pkcs8' }));
    const withKey = await resolveProvider({
      ...GOOD,
      client_secret: undefined,
      token_endpoint_auth_method: 'private_key_jwt',
      private_key_file: join(folder, 'key.pem'),
      private_key_id: 'k1',
    });
    expect(withKey.authMethod).toBe('private_key_jwt');
    expect(withKey.privateKey?.kid).toBe('k1');
  });

  it('fails the start with a line naming the missing file', async () => {
    await expect(
      resolveProvider({ ...GOOD, client_secret: undefined, client_secret_file: join(folder, 'absent') }),
    ).rejects.toThrow(/secret file .*absent cannot be read: ENOENT/);
  });
});

describe('the seed file is the truth', () => {
  let app: TestApp;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const seed = {
      ...testSeed(),
      identity_providers: [GOOD, { ...GOOD, id: 'partner', display_name: 'Partner' }],
    };
    ({ app, close } = await startTestApp({ seed: seed as SeedDocument }));
  });
  afterAll(() => close());

  const rows = async () =>
    Object.fromEntries(
      (await app.database.db.select().from(identityProviders)).map((row) => [
        row.id,
        row.disabledAt !== null,
      ]),
    );

  it('disables a provider the file no longer names, and enables it when named again', async () => {
    expect(await rows()).toEqual({ corp: false, partner: false });
    await app.reseed({ ...testSeed(), identity_providers: [GOOD] } as SeedDocument);
    expect(await rows()).toEqual({ corp: false, partner: true });
    await app.reseed({
      ...testSeed(),
      identity_providers: [GOOD, { ...GOOD, id: 'partner', display_name: 'Partner' }],
    } as SeedDocument);
    expect(await rows()).toEqual({ corp: false, partner: false });
  });
});
