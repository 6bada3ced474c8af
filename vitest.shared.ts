import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repositoryRoot = dirname(fileURLToPath(import.meta.url));

/**
 * Reporters shared by every package's vitest.config.ts: the default console output, plus a JSON
 * report per package and database (PGlite or PostgreSQL) that scripts/test-summary.mjs adds up.
 */
export function reporters(packageDir: string): Array<string | [string, { outputFile: string }]> {
  const database = process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite';
  const outputFile = join(repositoryRoot, '.vitest-results', `${basename(packageDir)}-${database}.json`);
  return ['default', ['json', { outputFile }]];
}
