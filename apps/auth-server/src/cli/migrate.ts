import { runMigrateCommand } from '@oidc-orders/service-kit';
import { DATABASE_DEFINITION } from '../db/client.js';

/** `pnpm --filter auth-server migrate plan|check`: what a deployment would apply (docs/upgrades.md). */
process.exitCode = await runMigrateCommand(process.argv.slice(2), {
  app: 'auth-server',
  definition: DATABASE_DEFINITION,
  databaseUrl: process.env.DATABASE_URL,
  write: (line) => process.stdout.write(`${line}\n`),
});
