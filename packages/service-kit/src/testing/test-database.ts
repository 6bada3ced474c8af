import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { assertTestFileMayOpenDatabase } from './database-tier.js';

/** The PostgreSQL server tests that need one use: TEST_DATABASE_URL's, else the local one CI starts. */
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Runs `work` on one short-lived connection to `url` (admin statements, a quick check). */
export async function withPostgresClient<T>(
  url: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/** A database for one test file or one process: its DATABASE_URL and how to remove it. */
export interface TestDatabaseUrl {
  /** `pglite://memory` (each process opens its own), or a fresh PostgreSQL database. */
  readonly url: string;
  /** Drops the PostgreSQL database (ending connections a crashed process left); idempotent. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Prefix of the database name, `<prefix>_<random>`: says which suite left it behind. */
  prefix: string;
  /**
   * The server to create it on (its URL is used as admin connection). Default: TEST_DATABASE_URL,
   * and without it `pglite://memory`, so the suites run with only Node.js installed.
   */
  adminUrl?: string | undefined;
}

/** A fresh database on `adminUrl` (TEST_DATABASE_URL by default), or `pglite://memory` without one. */
export async function createTestDatabase(options: TestDatabaseOptions): Promise<TestDatabaseUrl> {
  // Without an explicit server the database follows TEST_DATABASE_URL: the database tier.
  if (options.adminUrl === undefined) assertTestFileMayOpenDatabase();
  const adminUrl = options.adminUrl ?? process.env.TEST_DATABASE_URL;
  if (!adminUrl) return { url: 'pglite://memory', drop: async () => {} };
  return createPostgresDatabase(options.prefix, adminUrl);
}

/** A fresh PostgreSQL database `<prefix>_<random>` on the server of `adminUrl`, whatever the environment says. */
export async function createPostgresDatabase(
  prefix: string,
  adminUrl = POSTGRES_ADMIN_URL,
): Promise<TestDatabaseUrl & { readonly name: string }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withPostgresClient(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    name,
    url: url.toString(),
    drop: () => {
      dropped ??= dropTestDatabase(name, adminUrl);
      return dropped;
    },
  };
}

/** Drops `name` on the server of `adminUrl`; FORCE (PostgreSQL 13+) ends connections still open. */
export async function dropTestDatabase(name: string, adminUrl = POSTGRES_ADMIN_URL): Promise<void> {
  await withPostgresClient(adminUrl, (client) =>
    client.query(`drop database if exists ${name} with (force)`),
  );
}

/**
 * Whether a file that needs PostgreSQL runs here: always under CI (a missing server fails it),
 * else only when the server answers, with a line naming it (without credentials) and saying why
 * not (the README's test command must pass with only Node.js and npm).
 */
export async function postgresForThisFile(file: string, adminUrl = POSTGRES_ADMIN_URL): Promise<boolean> {
  if (process.env.CI) return true;
  try {
    await withPostgresClient(adminUrl, (client) => client.query('select 1'));
    return true;
  } catch {
    const server = adminUrl.replace(/\/\/[^@]*@/, '//');
    console.warn(`${file}: skipped, needs a PostgreSQL server at ${server} (or set TEST_DATABASE_URL)`);
    return false;
  }
}
