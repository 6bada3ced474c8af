import { describeDatabaseLocation, parseDatabaseUrl } from './database-url.js';
import {
  lastAppliedMigration,
  type MigrationPlan,
  planMigrations,
  readCommittedMigrations,
} from './migration-plan.js';
import { type DatabaseDefinition, openDatabase } from './open-database.js';

export const MIGRATE_USAGE = `usage: migrate <plan|check>   (reads DATABASE_URL; changes nothing)
  plan    list the migrations this release would apply to the database, and whether the running
          release can stay up while they apply
  check   the same, exiting 1 when a pending migration contracts the schema`;

export interface MigrateCommandOptions {
  /** The app's name in the output (`auth-server`, `orders`). */
  app: string;
  definition: DatabaseDefinition<Record<string, unknown>>;
  databaseUrl: string | undefined;
  write: (line: string) => void;
}

/**
 * `pnpm --filter <app> migrate plan|check`: what a deployment would apply, read from the database
 * the running release uses, without applying anything. Returns the process exit code.
 */
export async function runMigrateCommand(args: string[], options: MigrateCommandOptions): Promise<number> {
  const [command] = args;
  if (command !== 'plan' && command !== 'check') {
    options.write(MIGRATE_USAGE);
    return 2;
  }
  const location = options.databaseUrl === undefined ? undefined : parseDatabaseUrl(options.databaseUrl);
  if (location === undefined) {
    options.write('DATABASE_URL must be set to the database to check (postgres://…, pglite://<dir>)');
    return 2;
  }
  const database = await openDatabase(location, options.definition, { connectTimeoutMs: 5000 });
  let plan: MigrationPlan;
  try {
    const migrations = await readCommittedMigrations(options.definition.migrationsFolder);
    plan = planMigrations(migrations, await lastAppliedMigration(database.db));
  } finally {
    await database.close();
  }
  for (const line of describePlan(options.app, describeDatabaseLocation(location), plan)) options.write(line);
  return command === 'check' && plan.contractions.length > 0 ? 1 : 0;
}

/** The plan as lines: one per pending migration, then one verdict line. */
export function describePlan(app: string, where: string, plan: MigrationPlan): string[] {
  const lines = [
    `${app} on ${where}: ${plan.total} migrations in this release, ${plan.applied} applied, ${plan.pending.length} pending`,
  ];
  for (const migration of plan.pending) {
    const contracting = plan.contractions.filter((contraction) => contraction.migration === migration.tag);
    lines.push(
      `  ${migration.tag} (${migration.statements.length} statements): ${contracting.length === 0 ? 'expand' : 'CONTRACT'}`,
    );
    for (const { statement, reason } of contracting)
      lines.push(`    ${reason}: ${statement.replace(/\s+/g, ' ').slice(0, 160)}`);
  }
  if (plan.pending.length === 0) lines.push('nothing to apply: the running release can stay up');
  else if (plan.applied === 0) lines.push('empty database: every migration applies at the first start');
  else if (plan.contractions.length === 0)
    lines.push('safe: only expanding migrations, the running release can stay up while they apply');
  else
    lines.push(
      `NOT SAFE: ${plan.contractions.length} contracting statement(s); the running release cannot stay up. Stop it before deploying, or ship the code that stops using the old schema first and contract in the next release (docs/upgrades.md)`,
    );
  return lines;
}
