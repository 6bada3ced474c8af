import { describe, expect, it } from 'vitest';
import {
  DatabaseUnavailableError,
  describeDatabaseLocation,
  openDatabase,
  parseDatabaseUrl,
} from '../src/index.js';

describe('parseDatabaseUrl', () => {
  it.each([
    ['postgres://u:p@db:5433/app', { driver: 'pg', connectionString: 'postgres://u:p@db:5433/app' }],
    ['pglite://memory', { driver: 'pglite', dataDir: undefined }],
    ['pglite://.data/app', { driver: 'pglite', dataDir: '.data/app' }],
  ])('%s', (url, expected) => {
    expect(parseDatabaseUrl(url)).toEqual(expected);
  });

  it.each(['', 'pglite://', 'mysql://db/x'])('rejects %j', (url) => {
    expect(parseDatabaseUrl(url)).toBeUndefined();
  });

  it('describes a location without its password', () => {
    const location = parseDatabaseUrl('postgres://user:secret@db:5433/app');
    expect(location && describeDatabaseLocation(location)).toBe('PostgreSQL at db:5433/app');
  });
});

describe('openDatabase', () => {
  it('opens in-memory PGlite, answers ping, closes twice without error, then reports an outage', async () => {
    const handle = await openDatabase(
      { driver: 'pglite', dataDir: undefined },
      { schema: {}, migrationsFolder: '/nonexistent', migrationLockKey: 1 },
    );
    await handle.ping(5000);
    await handle.close();
    await handle.close();
    await expect(handle.ping(5000)).rejects.toBeInstanceOf(DatabaseUnavailableError);
  });

  it('a PostgreSQL server that refuses connections is an outage on ping', async () => {
    const handle = await openDatabase(
      { driver: 'pg', connectionString: 'postgres://nobody@127.0.0.1:1/none' },
      { schema: {}, migrationsFolder: '/nonexistent', migrationLockKey: 1 },
      { connectTimeoutMs: 2000 },
    );
    try {
      await expect(handle.ping(5000)).rejects.toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      await handle.close();
    }
  });
});
