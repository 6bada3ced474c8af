import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDrizzleStores } from '../src/storage/drizzle/stores.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';

/**
 * What a code exchange and a refresh rotation write, on the database itself: both tables logged
 * (a standby has every code, so a sign-in in flight survives a failover), refresh-token pages with
 * room for the rotation's update, and no index beyond the lookups the stores make, since every
 * index is one more insert per new row.
 */
describe(`token storage layout on ${databaseKind}`, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  async function rows<T>(query: ReturnType<typeof sql>): Promise<T[]> {
    const result = await database.handle.db.execute(query);
    return (result as unknown as { rows: T[] }).rows;
  }

  it('keeps authorization codes and refresh tokens in logged tables, which standbys replicate', async () => {
    const tables = await rows<{ relname: string; relpersistence: string }>(
      sql`select relname, relpersistence from pg_class
          where relname in ('authorization_codes', 'refresh_tokens') and relkind = 'r' order by relname`,
    );
    expect(tables).toEqual([
      { relname: 'authorization_codes', relpersistence: 'p' },
      { relname: 'refresh_tokens', relpersistence: 'p' },
    ]);
  });

  it('leaves room on refresh-token pages for the one update of each row (fillfactor 70)', async () => {
    const [table] = await rows<{ reloptions: string[] | string | null }>(
      sql`select reloptions from pg_class where relname = 'refresh_tokens' and relkind = 'r'`,
    );
    expect(String(table?.reloptions)).toContain('fillfactor=70');
  });

  it('indexes codes by hash only, and refresh tokens by hash and by grant', async () => {
    const indexes = await rows<{ tablename: string; indexname: string }>(
      sql`select tablename, indexname from pg_indexes
          where tablename in ('authorization_codes', 'refresh_tokens') order by tablename, indexname`,
    );
    expect(indexes).toEqual([
      { tablename: 'authorization_codes', indexname: 'authorization_codes_pkey' },
      { tablename: 'refresh_tokens', indexname: 'refresh_tokens_grant_id_idx' },
      { tablename: 'refresh_tokens', indexname: 'refresh_tokens_pkey' },
    ]);
  });

  it('a rotation names the successor in the rotated row, in the same statement', async () => {
    const stores = createDrizzleStores(database.handle.db);
    const token = (hash: string, parentHash: string | null) => ({
      tokenHash: hash,
      grantId: 'grant-layout',
      clientId: 'web',
      sub: 'user-layout',
      scopes: ['openid'],
      resources: [],
      parentHash,
      createdAt: 1_700_000_000,
      expiresAt: 1_800_000_000,
      usedAt: null,
      revokedAt: null,
      dpopJkt: null,
    });
    await stores.refreshTokens.createRefreshToken(token('layout-parent', null));
    const rotated = await stores.refreshTokens.rotateRefreshToken!('layout-parent', 1_700_000_100, {
      refreshToken: token('layout-child', 'layout-parent'),
      accessToken: null,
    });
    expect(rotated).toBe(true);
    const [parent] = await rows<{ successor_hash: string | null; used_at: string | number }>(
      sql`select successor_hash, used_at from refresh_tokens where token_hash = 'layout-parent'`,
    );
    expect(parent?.successor_hash).toBe('layout-child');
    expect(Number(parent?.used_at)).toBe(1_700_000_100);
  });
});
