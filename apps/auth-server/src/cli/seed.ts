import { PgliteDirectoryInUseError } from '@oidc-orders/service-kit';
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/client.js';
import { SeedError } from '../seed.js';
import { formatSeedPlan } from '../seed-plan/format.js';
import { planHasChanges } from '../seed-plan/plan.js';
import { planSeedFile, seedPlanContext } from '../seed-plan/plan-seed.js';
import { commandEnvironment } from './command-environment.js';

/**
 * `pnpm --filter auth-server seed plan [file] [--json]`: what applying the seed file (default
 * SEED_FILE) to DATABASE_URL would change, without changing anything, for a pull request's CI.
 * Exit codes: 0 nothing would change, 2 something would, 1 an error (unreadable or invalid file,
 * no database).
 */
const USAGE = `usage: seed plan [file] [--json]
  plan [file]   what applying the file (default: SEED_FILE) would change; exit 0 nothing, 2 changes, 1 error
  --json        the plan as JSON (the same as GET /admin/api/seed/plan)`;

export const EXIT_NO_CHANGES = 0;
export const EXIT_ERROR = 1;
export const EXIT_CHANGES = 2;

async function main(args: string[]): Promise<number> {
  const json = args.includes('--json');
  const [command, file, ...rest] = args.filter((arg) => arg !== '--json');
  if (command !== 'plan' || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return EXIT_ERROR;
  }
  const environment = commandEnvironment(process.env, (line) => process.stderr.write(`seed: ${line}\n`));
  const config = loadConfig(environment);
  const path = file ?? config.seedFile;
  if (path === undefined) throw new ConfigError('give a seed file, or set SEED_FILE');
  const database = await openDatabase(config.database);
  try {
    const plan = await planSeedFile(database.db, path, seedPlanContext(config));
    process.stdout.write(`${json ? JSON.stringify(plan, null, 2) : formatSeedPlan(plan, path)}\n`);
    return planHasChanges(plan) ? EXIT_CHANGES : EXIT_NO_CHANGES;
  } finally {
    await database.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const known =
      error instanceof ConfigError ||
      error instanceof SeedError ||
      error instanceof PgliteDirectoryInUseError;
    process.stderr.write(`seed: ${known ? (error as Error).message : String(error)}\n`);
    process.exitCode = EXIT_ERROR;
  },
);
