import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquirePglite, type PgliteTemplate, pgliteTemplate } from '../src/testing/index.js';

/**
 * The test databases' pool (src/testing/pglite-pool.ts): a lent instance starts as the template, a returned one
 * comes back to the next file exactly as the template (no rows, sequences restarted, a new session),
 * the finished file's handle stops working, and an instance whose schema a test changed is not reused.
 */
const MIGRATION = `
  create schema drizzle;
  create table drizzle.__drizzle_migrations (id serial primary key, hash text not null);
  insert into drizzle.__drizzle_migrations (hash) values ('0000');
  create table items (id serial primary key, name text not null);
  create sequence tickets start 100;
`;

let folder: string;
let template: PgliteTemplate;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'pglite-pool-test-'));
  // The template file is named after the folder's contents, so later runs reuse it (as the apps'
  // templates are reused until their migrations change) instead of running initdb again.
  await writeFile(join(folder, '0000_items.sql'), MIGRATION);
  template = pgliteTemplate('service-kit-test', folder, async (client) => {
    await client.exec(MIGRATION);
  });
});
afterAll(() => rm(folder, { recursive: true, force: true }));

async function itemNames(client: PGlite): Promise<string[]> {
  return (await client.query<{ name: string }>('select name from items order by id')).rows.map(
    (row) => row.name,
  );
}

/** Tells instances apart: each PGlite instance started its server at its own moment. */
async function serverStart(client: PGlite): Promise<string> {
  const result = await client.query<{ started: string }>(
    'select pg_postmaster_start_time()::text as started',
  );
  return result.rows[0]?.started ?? '';
}

async function nextTicket(client: PGlite): Promise<number> {
  return Number((await client.query<{ n: string }>(`select nextval('tickets') as n`)).rows[0]?.n);
}

describe('PGlite test databases from a template', () => {
  it('lends an instance as migrated, and takes it back emptied to that state for the next file', async () => {
    const first = await acquirePglite(template);
    expect(await itemNames(first.client)).toEqual([]);
    await first.client.query(`insert into items (name) values ('left behind')`);
    expect(await nextTicket(first.client)).toBe(100);
    const instance = await serverStart(first.client);
    await first.release();

    const second = await acquirePglite(template);
    try {
      expect(await itemNames(second.client)).toEqual([]);
      // Identity and free-standing sequences restart as in the template.
      await second.client.query(`insert into items (name) values ('fresh')`);
      expect((await second.client.query<{ id: number }>('select id from items')).rows).toEqual([{ id: 1 }]);
      expect(await nextTicket(second.client)).toBe(100);
      // The same instance, not another one loaded from the template.
      expect(await serverStart(second.client)).toBe(instance);
      // The migration journal is kept.
      const journal = await second.client.query('select hash from drizzle.__drizzle_migrations');
      expect(journal.rows).toEqual([{ hash: '0000' }]);
    } finally {
      await second.release();
    }
  });

  it('gives the next file a new session: settings and temporary tables are gone', async () => {
    const first = await acquirePglite(template);
    await first.client.exec(`set application_name = 'first file'; create temporary table scratch (x int)`);
    const instance = await serverStart(first.client);
    await first.release();

    const second = await acquirePglite(template);
    try {
      expect(await serverStart(second.client)).toBe(instance);
      const setting = await second.client.query<{ application_name: string }>('show application_name');
      expect(setting.rows[0]?.application_name).not.toBe('first file');
      await expect(second.client.query('select * from scratch')).rejects.toThrow(/scratch/);
    } finally {
      await second.release();
    }
  });

  it('fails the finished file’s handle as a closed database, so a late write cannot reach the next file', async () => {
    const lent = await acquirePglite(template);
    await lent.release();
    expect(lent.client.closed).toBe(true);
    await expect(lent.client.query(`insert into items (name) values ('late')`)).rejects.toThrow(
      'PGlite is closed',
    );

    const next = await acquirePglite(template);
    try {
      expect(await itemNames(next.client)).toEqual([]);
    } finally {
      await next.release();
    }
  });

  it('treats close() on the lent handle as the end of the loan, not of the instance', async () => {
    const lent = await acquirePglite(template);
    await lent.client.close();
    expect(lent.client.closed).toBe(true);
    await expect(lent.client.query('select 1')).rejects.toThrow('PGlite is closed');
    await lent.release();

    const next = await acquirePglite(template);
    try {
      expect((await next.client.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await next.release();
    }
  });

  it('does not reuse an instance whose schema a test changed: the next file gets the template’s', async () => {
    const changed = await acquirePglite(template);
    await changed.client.exec('alter table items add column extra text; create table stray (x int)');
    await changed.release();

    const next = await acquirePglite(template);
    try {
      const columns = await next.client.query<{ column_name: string }>(
        `select column_name from information_schema.columns where table_name = 'items' order by 1`,
      );
      expect(columns.rows.map((row) => row.column_name)).toEqual(['id', 'name']);
      await expect(next.client.query('select * from stray')).rejects.toThrow(/stray/);
    } finally {
      await next.release();
    }
  });
});
