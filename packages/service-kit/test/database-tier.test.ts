import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertTestFileMayOpenDatabase, markTestFileWithoutDatabase } from '../src/testing/database-tier.js';
import { acquirePglite, createTestDatabase } from '../src/testing/index.js';

// This file is listed under withoutDatabase in vitest.config.ts: the setup file marks it.
const LISTED = 'test/database-tier.test.ts';

describe('the database tier guard', () => {
  afterEach(() => markTestFileWithoutDatabase(LISTED));

  it('refuses a pooled PGlite database to a file listed under withoutDatabase', async () => {
    const template = {
      path: join(tmpdir(), 'database-tier-guard-never-written.tar'),
      migrate: async () => {},
    };
    await expect(acquirePglite(template)).rejects.toThrow(
      /^test\/database-tier\.test\.ts opens the test database .* lists it under withoutDatabase/,
    );
  });

  it('refuses a database that follows the environment (PGlite or PostgreSQL) to a listed file', async () => {
    await expect(createTestDatabase({ prefix: 'tier_guard' })).rejects.toThrow(
      /lists it under withoutDatabase/,
    );
  });

  it('lets a file that is not listed open one', () => {
    markTestFileWithoutDatabase(undefined);
    expect(() => assertTestFileMayOpenDatabase()).not.toThrow();
    markTestFileWithoutDatabase('test/other.test.ts');
    expect(() => assertTestFileMayOpenDatabase()).toThrow(/^test\/other\.test\.ts opens the test database/);
  });
});
