import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signingKeys } from '../src/db/schema.js';
import { decryptPrivateKey, KeyDecryptionError } from '../src/keys/key-encryption.js';
import { startTestApp, testConfig } from './helpers/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';

const otherKey = Buffer.alloc(32, 9).toString('base64url');

describe('signing keys at rest', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('are created once, with the private parts encrypted, and shared by every instance', async () => {
    // Two instances start together against an empty database: they must agree on one key per alg.
    // On PostgreSQL the second one gets its own connection pool, like a second process.
    const secondDatabase =
      databaseKind === 'postgres' ? { ...database, handle: await database.openAnother() } : database;
    const [first, second] = await Promise.all([
      startTestApp({ database, signingKeys: 'generate' }),
      startTestApp({ database: secondDatabase, signingKeys: 'generate' }),
    ]);
    try {
      const rows = await database.handle.db.select().from(signingKeys);
      expect(rows.map((row) => row.alg).sort()).toEqual(['ES256', 'RS256']);

      for (const row of rows) {
        expect(row.privateKeyCiphertext).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
        // No plaintext JWK members in the stored row.
        expect(row.privateKeyCiphertext).not.toMatch(/"d"|"kty"|PRIVATE KEY/);
        expect(JSON.stringify(row.publicJwk)).not.toMatch(/"d"|"p"|"q"/);
        // It decrypts with the configured key into the private JWK.
        const privateJwk = JSON.parse(
          decryptPrivateKey(testConfig().keyEncryptionKey, row.kid, row.privateKeyCiphertext),
        );
        expect(privateJwk).toHaveProperty('d');
      }

      const jwks = async (app: typeof first.app) =>
        (await app.inject({ method: 'GET', url: '/jwks' })).json();
      expect(await jwks(second.app)).toEqual(await jwks(first.app));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('are reused on restart with the same KEY_ENCRYPTION_KEY', async () => {
    const before = await database.handle.db.select().from(signingKeys);
    const restarted = await startTestApp({ database, signingKeys: 'generate' });
    try {
      const after = await database.handle.db.select().from(signingKeys);
      expect(after.map((row) => row.kid).sort()).toEqual(before.map((row) => row.kid).sort());
    } finally {
      await restarted.close();
    }
  });

  it('fail the start with a clear message under another KEY_ENCRYPTION_KEY, and are never replaced', async () => {
    const before = await database.handle.db.select().from(signingKeys);
    const start = startTestApp({ database, env: { KEY_ENCRYPTION_KEY: otherKey }, signingKeys: 'generate' });
    await expect(start).rejects.toBeInstanceOf(KeyDecryptionError);
    await expect(start).rejects.toThrow(
      /^KEY_ENCRYPTION_KEY cannot decrypt signing key .* stored in the database/,
    );
    const after = await database.handle.db.select().from(signingKeys);
    expect(after).toEqual(before);
  });

  it('cannot be moved between rows (the kid is authenticated with the ciphertext)', async () => {
    const [a, b] = await database.handle.db.select().from(signingKeys);
    expect(() =>
      decryptPrivateKey(testConfig().keyEncryptionKey, b?.kid ?? '', a?.privateKeyCiphertext ?? ''),
    ).toThrow(KeyDecryptionError);
  });
});
