import { drizzle } from 'drizzle-orm/node-postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schema from '../src/db/schema.js';
import { createDrizzleStores, type DrizzleStores } from '../src/storage/drizzle/stores.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';

/**
 * The coalesced reads (`token_hash = any($1)`) must be planned for every batch: as named prepared
 * statements PostgreSQL keeps a generic plan after five executions, and one made while the tables
 * were small (a hash join over a sequential scan of `grants`) grows with the tables
 * (bench/README.md, "Coalesced lookups and database profile"). One connection, so
 * `pg_prepared_statements` shows every statement the stores prepared on it.
 */

const runs = await postgresForThisFile('coalesced-lookups-plans.test.ts');

describe.runIf(runs)('coalesced lookups on PostgreSQL', () => {
  let database: TestDatabase;
  let client: pg.Client;
  let stores: DrizzleStores;

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    if (database.location.driver !== 'pg') throw new Error('expected a PostgreSQL database');
    client = new pg.Client({ connectionString: database.location.connectionString });
    await client.connect();
    stores = createDrizzleStores(drizzle({ client, schema }));
  });
  afterAll(async () => {
    await client?.end();
    await database?.drop();
  });

  async function preparedStatements(): Promise<{ name: string; statement: string }[]> {
    const { rows } = await client.query('select name, statement from pg_prepared_statements');
    return rows;
  }

  it('runs the batch reads as unnamed statements, planned per batch, never as a kept prepared plan', async () => {
    for (let round = 0; round < 8; round++) {
      const hashes = Array.from({ length: 10 }, (_, n) => `missing-${round}-${n}`);
      await Promise.all([
        ...hashes.map((hash) => stores.accessTokens.findAccessToken(hash)),
        ...hashes.map((hash) => stores.refreshTokens.findRefreshToken(hash)),
        ...hashes.map((hash) => stores.refreshTokens.findRefreshTokenWithGrantAndUser!(hash)),
        ...hashes.map((hash) => stores.codes.findAuthorizationCodeWithGrantAndUser!(hash)),
      ]);
    }
    // The single-row reads are named prepared statements on this connection, so the view sees them.
    await stores.grants.findGrant('missing');
    const statements = await preparedStatements();
    expect(statements.map((statement) => statement.name)).toContain('auth_find_grant');
    // The code exchange's joined read is a batch read too, not its single-row prepared statement.
    expect(statements.map((statement) => statement.name)).not.toContain('auth_code_with_grant_and_user');
    expect(statements.filter((statement) => /= any\(/i.test(statement.statement))).toEqual([]);
  });
});
