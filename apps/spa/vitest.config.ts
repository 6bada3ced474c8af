import { configDefaults, defineConfig } from 'vitest/config';
import { databaseTier, reporters } from '../../vitest.shared.js';

// Neither file opens the test database (the package has no test:database script).
const database = databaseTier(['test/server.test.ts', 'test/server-logs.test.ts']);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...database.exclude],
    setupFiles: database.setupFiles,
    provide: database.provide,
    reporters: reporters(import.meta.dirname),
  },
});
