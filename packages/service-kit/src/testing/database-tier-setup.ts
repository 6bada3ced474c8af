/**
 * A vitest setup file (added to every tier by vitest.shared.ts): before each test file, tells the
 * test kit whether the file is listed under `withoutDatabase`, so opening the test database from it
 * fails (database-tier.ts). A listed file that reads process.env.TEST_DATABASE_URL fails as well.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { beforeAll, expect, inject } from 'vitest';
import { listedWithoutDatabaseError, markTestFileWithoutDatabase } from './database-tier.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Paths relative to the package (`test/config.test.ts`) of the files that never open the test database. */
    testFilesWithoutDatabase: string[];
  }
}

// In beforeAll, not at the top level: unit files share a worker's modules (isolate: false), and a
// setup file's module body may then run once for several files; a hook registers per file.
beforeAll(() => {
  const testPath = expect.getState().testPath ?? '';
  const file = relative(process.cwd(), testPath).split('\\').join('/');
  const listed = (inject('testFilesWithoutDatabase') ?? []).includes(file);
  if (listed && readFileSync(testPath, 'utf8').includes('process.env.TEST_DATABASE_URL')) {
    throw listedWithoutDatabaseError(file, 'reads TEST_DATABASE_URL');
  }
  markTestFileWithoutDatabase(listed ? file : undefined);
});
