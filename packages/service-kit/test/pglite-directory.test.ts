import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type DatabaseHandle, lockFileOf, openDatabase, PgliteDirectoryInUseError } from '../src/index.js';
import { SHARE_SOCKET_FILE, shareConnectionString } from '../src/pglite-share.js';

/**
 * A `pglite://<dir>` database is opened by one process; others of the same user reach it through
 * that process's Unix socket (in a 0700 folder), or are refused, never each on a copy of their own (whose last writer wins).
 */
const DEFINITION = { schema: {}, migrationsFolder: '/nonexistent', migrationLockKey: 1 };
const opened: DatabaseHandle<Record<string, never>>[] = [];
const folders: string[] = [];

async function open(dataDir: string, shareOnLoopback: boolean) {
  const handle = await openDatabase({ driver: 'pglite', dataDir }, DEFINITION, { shareOnLoopback });
  opened.push(handle);
  return handle;
}

function scratchDirectory(): string {
  const folder = mkdtempSync(join(tmpdir(), 'pglite-directory-'));
  folders.push(folder);
  return join(folder, 'db');
}

const ownerOf = (dataDir: string) =>
  JSON.parse(readFileSync(lockFileOf(dataDir), 'utf8')) as { pid: number; socketDir: string | null };

/** Rows of `notes`: both drivers answer `{ rows }` (node-postgres' and PGlite's result shapes). */
async function count(handle: DatabaseHandle<Record<string, never>>): Promise<number> {
  const result = (await handle.db.execute(sql`select count(*)::int as n from notes`)) as unknown as {
    rows: Array<{ n: number }>;
  };
  return result.rows[0]!.n;
}

afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('a pglite://<dir> database opened by one process', () => {
  it('records its owner and, when shared, a socket folder that reaches the same database; the lock goes with close', async () => {
    const dataDir = scratchDirectory();
    const owner = await open(dataDir, true);
    expect(ownerOf(dataDir)).toMatchObject({ pid: process.pid, socketDir: expect.any(String) });
    await owner.db.execute(sql`create table notes (text text not null)`);

    const other = await open(dataDir, false);
    expect(other.driver).toBe('pg');
    await other.db.execute(sql`insert into notes values ('through the port')`);
    expect(await count(owner)).toBe(1);

    await other.close();
    await owner.close();
    expect(existsSync(lockFileOf(dataDir))).toBe(false);
    // The write made through the socket is on disk: a later opener of the folder reads it.
    expect(await count(await open(dataDir, false))).toBe(1);
  });

  it("keeps the owner's own statements out of a socket client's open transaction, and the client's out of the owner's", async () => {
    const dataDir = scratchDirectory();
    const owner = await open(dataDir, true);
    await owner.db.execute(sql`create table notes (text text not null)`);
    const client = new pg.Client(shareConnectionString(ownerOf(dataDir).socketDir!));
    await client.connect();
    try {
      await client.query('begin');
      await client.query(`insert into notes values ('not committed')`);
      const ownerRead = count(owner);
      let settled = false;
      void ownerRead.finally(() => (settled = true));
      await new Promise((done) => setTimeout(done, 300));
      // Without the gate the owner's query would run inside the client's transaction and see 1 row.
      expect(settled).toBe(false);
      await client.query('rollback');
      expect(await ownerRead).toBe(0);

      const ownerTransaction = owner.db.transaction(async (tx) => {
        await tx.execute(sql`insert into notes values ('owner')`);
        await new Promise((done) => setTimeout(done, 300));
        throw new Error('roll back');
      });
      await new Promise((done) => setTimeout(done, 50));
      const clientWrite = client.query(`insert into notes values ('client')`);
      await expect(ownerTransaction).rejects.toThrow('roll back');
      await clientWrite;
      // The client's insert was not swept into the owner's rolled-back transaction.
      expect(await count(owner)).toBe(1);
    } finally {
      await client.end();
    }
  });

  it('refuses, in one line naming the process, while an owner that does not share it runs', async () => {
    const dataDir = scratchDirectory();
    await open(dataDir, false);
    const second = openDatabase({ driver: 'pglite', dataDir }, DEFINITION);
    await expect(second).rejects.toBeInstanceOf(PgliteDirectoryInUseError);
    await expect(second).rejects.toThrow(`is open in process ${process.pid}, which does not share it`);
  });

  it('takes over the lock of a process that no longer exists', async () => {
    const dataDir = scratchDirectory();
    const gone = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString();
    writeFileSync(lockFileOf(dataDir), JSON.stringify({ pid: Number(gone), socketDir: '/nowhere' }));
    const handle = await open(dataDir, false);
    expect(handle.driver).toBe('pglite');
    expect(ownerOf(dataDir)).toEqual({ pid: process.pid, socketDir: null });
  });
});

describe('the share of a pglite://<dir> database', () => {
  it('is a Unix socket in a folder only its user may enter (0700), named in a 0600 lock; no TCP port; gone at close', async () => {
    const dataDir = scratchDirectory();
    const owner = await open(dataDir, true);
    const recorded = ownerOf(dataDir);
    expect(Object.keys(recorded).sort()).toEqual(['pid', 'socketDir']);
    const folder = statSync(recorded.socketDir!);
    expect(folder.isDirectory()).toBe(true);
    expect(folder.mode & 0o777).toBe(0o700);
    expect(folder.uid).toBe(process.getuid!());
    expect(statSync(join(recorded.socketDir!, SHARE_SOCKET_FILE)).isSocket()).toBe(true);
    expect(statSync(lockFileOf(dataDir)).mode & 0o777).toBe(0o600);
    await owner.close();
    expect(existsSync(recorded.socketDir!)).toBe(false);
  });

  it('is not reached through a loopback port a lock of an older start names: that owner counts as not sharing', async () => {
    const dataDir = scratchDirectory();
    await open(dataDir, false);
    writeFileSync(lockFileOf(dataDir), JSON.stringify({ pid: process.pid, port: 5432 }));
    await expect(openDatabase({ driver: 'pglite', dataDir }, DEFINITION)).rejects.toBeInstanceOf(
      PgliteDirectoryInUseError,
    );
  });
});
