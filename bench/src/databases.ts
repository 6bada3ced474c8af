/**
 * Databases the harness creates for one run and drops afterwards, through the admin connection
 * (`BENCH_DATABASE_URL`, default postgres://postgres@127.0.0.1:5432/test).
 */
import pg from 'pg';

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

/** The table of the bare-pg ceiling: the columns an order needs, one index for the list query. */
export async function createBarePgSchema(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`CREATE TABLE bench_orders (
      id serial PRIMARY KEY,
      email text NOT NULL,
      quantity integer NOT NULL CHECK (quantity >= 1),
      total numeric(12, 2) NOT NULL,
      status text NOT NULL DEFAULT 'created',
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
    await client.query('CREATE INDEX bench_orders_email_idx ON bench_orders (email)');
  } finally {
    await client.end();
  }
}
