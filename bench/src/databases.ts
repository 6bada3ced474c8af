/**
 * Databases the harness creates for one run and drops afterwards, through the admin connection
 * (`BENCH_DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const REPO_DIR = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

export const DEFAULT_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface DatabaseAdmin {
  /** Creates `name` and returns its connection string. */
  create(name: string): Promise<string>;
  /** Drops every database this admin created (terminating leftover sessions). */
  dropAll(): Promise<void>;
  serverVersion(): Promise<string>;
  /** Process ids of the server backends connected to these databases (for their CPU time). */
  backendPids(names: readonly string[]): Promise<number[]>;
}

export async function connectAdmin(adminUrl: string): Promise<DatabaseAdmin> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  const created: string[] = [];
  const urlFor = (name: string) => {
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  return {
    async create(name) {
      if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unsafe database name ${name}`);
      await client.query(`CREATE DATABASE "${name}"`);
      created.push(name);
      return urlFor(name);
    },
    async dropAll() {
      for (const name of created.splice(0)) {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch((error: unknown) => {
          console.error(`[bench] could not drop database ${name}: ${String(error)}`);
        });
      }
      await client.end().catch(() => undefined);
    },
    async serverVersion() {
      const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
      return rows[0]?.server_version ?? 'unknown';
    },
    async backendPids(names) {
      const { rows } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE datname = ANY($1::text[])',
        [names],
      );
      return rows.map((row) => row.pid);
    },
  };
}

/**
 * The bare-pg ceiling's schema: the orders service's own migrations (apps/orders/drizzle/*.sql, in
 * order), so the ceiling's statements touch the same tables, constraints and indexes as ours.
 */
export async function createBarePgSchema(databaseUrl: string): Promise<void> {
  const migrations = join(REPO_DIR, 'apps/orders/drizzle');
  const files = (await readdir(migrations)).filter((file) => file.endsWith('.sql')).sort();
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const file of files) {
      const text = await readFile(join(migrations, file), 'utf8');
      for (const statement of text.split('--> statement-breakpoint')) {
        if (statement.trim() !== '') await client.query(statement);
      }
    }
  } finally {
    await client.end();
  }
}
