import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/**
 * Expand, then contract: during a rolling upgrade the previous release keeps serving against the
 * database the new release has just migrated. A migration is safe then only when it expands the
 * schema (new tables, nullable columns, columns with defaults, indexes); anything that removes,
 * renames or tightens what the running release reads or writes must wait for the release after the
 * one that stopped using it. This module reads the committed drizzle-kit migrations, finds the ones
 * a database has not applied yet, and names every contracting statement among them.
 */

/** One committed drizzle-kit migration: `drizzle/<tag>.sql`, listed in `drizzle/meta/_journal.json`. */
export interface CommittedMigration {
  tag: string;
  /** The journal's `when`: drizzle's migrator records it as `created_at` once applied. */
  createdAt: number;
  statements: string[];
}

/** A statement the running release may not survive, and why. */
export interface Contraction {
  migration: string;
  statement: string;
  reason: string;
}

export interface MigrationPlan {
  total: number;
  applied: number;
  pending: CommittedMigration[];
  contractions: Contraction[];
}

/**
 * Patterns of contracting statements, each with what breaks for the release still running. Checked
 * on the statement with its comments removed, case-insensitively.
 */
const CONTRACTING_OPERATIONS: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  { pattern: /\bdrop\s+table\b/, reason: 'drops a table the running release may still read or write' },
  { pattern: /\bdrop\s+column\b/, reason: 'drops a column the running release may still read or write' },
  { pattern: /\bdrop\s+(schema|type|view|sequence)\b/, reason: 'drops an object the running release uses' },
  { pattern: /\brename\b/, reason: 'renames something the running release names by its old name' },
  {
    pattern: /\bset\s+not\s+null\b/,
    reason: 'makes a column required that the running release may leave empty',
  },
  { pattern: /\bdrop\s+default\b/, reason: 'removes a default the running release relies on when inserting' },
  {
    pattern: /\balter\s+column\s+\S+\s+(set\s+data\s+)?type\b/,
    reason: 'changes a column type under the running release',
  },
  {
    pattern: /\balter\s+type\s+\S+\s+(drop|rename)\b/,
    reason: 'changes an enum type under the running release',
  },
  { pattern: /\btruncate\b/, reason: 'deletes every row of a table' },
  {
    pattern: /\badd\s+column\s+(?:(?!\bdefault\b).)*\bnot\s+null\b(?:(?!\bdefault\b).)*$/s,
    reason: 'adds a required column without a default: the running release inserts rows without it',
  },
];

/** Why `statement` is unsafe while the previous release runs, or undefined when it only expands. */
export function contractionReason(statement: string): string | undefined {
  const text = statement
    .replace(/--[^\n]*/g, ' ')
    .replace(/\s+/g, ' ')
    .toLowerCase();
  return CONTRACTING_OPERATIONS.find(({ pattern }) => pattern.test(text))?.reason;
}

/** The folder's migrations in journal order, split at drizzle-kit's statement breakpoints. */
export async function readCommittedMigrations(migrationsFolder: string): Promise<CommittedMigration[]> {
  const journal = JSON.parse(await readFile(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string; when: number }>;
  };
  return Promise.all(
    journal.entries.map(async ({ tag, when }) => {
      const text = await readFile(join(migrationsFolder, `${tag}.sql`), 'utf8');
      const statements = text
        .split('--> statement-breakpoint')
        .map((statement) => statement.trim())
        .filter((statement) => statement !== '');
      return { tag, createdAt: when, statements };
    }),
  );
}

/**
 * The `created_at` of the newest migration applied to `db`, undefined on an empty database. Drizzle's
 * migrator applies every migration whose journal time is later than this one, so the same rule
 * tells which are pending.
 */
export async function lastAppliedMigration(
  db: PgDatabase<PgQueryResultHKT, Record<string, unknown>>,
): Promise<number | undefined> {
  // Both drivers answer `execute` with `{ rows }`; the generic result type does not say so.
  const rowsOf = async (query: ReturnType<typeof sql>) =>
    ((await db.execute(query)) as { rows: Array<Record<string, unknown>> }).rows;
  const [exists] = await rowsOf(sql`select to_regclass('drizzle.__drizzle_migrations') is not null as found`);
  if (exists?.found !== true) return undefined;
  const [last] = await rowsOf(sql`select max(created_at) as created_at from drizzle.__drizzle_migrations`);
  const value = last?.created_at;
  return value === null || value === undefined ? undefined : Number(value);
}

/** What a deployment of `migrations` would apply to a database whose newest migration is `lastApplied`. */
export function planMigrations(
  migrations: CommittedMigration[],
  lastApplied: number | undefined,
): MigrationPlan {
  const pending = migrations.filter(({ createdAt }) => lastApplied === undefined || createdAt > lastApplied);
  // An empty database has no running release to protect: creating everything is safe.
  const contractions =
    lastApplied === undefined
      ? []
      : pending.flatMap(({ tag, statements }) => contractionsOf(tag, statements));
  return { total: migrations.length, applied: migrations.length - pending.length, pending, contractions };
}

export function contractionsOf(migration: string, statements: string[]): Contraction[] {
  return statements.flatMap((statement) => {
    const reason = contractionReason(statement);
    return reason === undefined ? [] : [{ migration, statement, reason }];
  });
}
