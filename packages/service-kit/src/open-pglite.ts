import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import type { DatabaseDefinition, DatabaseHandle, OpenDatabaseOptions } from './database-handle.js';
import { pingDatabase } from './database-ping.js';
import type { PgliteDirectoryLock } from './pglite-directory-lock.js';
import { sharePglite } from './pglite-share.js';
import { isTracingOn } from './tracing/active-span.js';
import { withStatementSpans } from './tracing/pglite-spans.js';

/*
 * The embedded database (PGlite), imported by open-database.ts only for a `pglite://` URL: a
 * server on PostgreSQL never loads PGlite or drizzle's driver for it.
 */

/** A new in-memory database (`pglite://memory`). */
export async function openInMemoryPglite<TSchema extends Record<string, unknown>>(
  definition: DatabaseDefinition<TSchema>,
  options: OpenDatabaseOptions,
): Promise<DatabaseHandle<TSchema>> {
  return pgliteDatabase(await PGlite.create(), definition, options);
}

/** A data folder this process has claimed (pglite-directory-lock.ts), released on close. */
export async function openOwnedPglite<TSchema extends Record<string, unknown>>(
  dataDir: string,
  lock: PgliteDirectoryLock,
  definition: DatabaseDefinition<TSchema>,
  options: OpenDatabaseOptions,
): Promise<DatabaseHandle<TSchema>> {
  let client: PGlite | undefined;
  let share: Awaited<ReturnType<typeof sharePglite>> | undefined;
  try {
    client = await PGlite.create(dataDir);
    if (options.shareOnLoopback) {
      share = await sharePglite(client);
      lock.publish(share.socketDir);
    }
  } catch (error) {
    await share?.stop();
    if (client && !client.closed) await client.close();
    lock.release();
    throw error;
  }
  const handle = pgliteDatabase(client, definition, options);
  const { close } = handle;
  return {
    ...handle,
    close: async () => {
      // Socket clients first, then the database, then the lock: nobody opens it half-closed.
      await share?.stop();
      await close();
      lock.release();
    },
  };
}

/** A handle on an already created PGlite instance (tests start theirs from a migrated template). */
export function pgliteDatabase<TSchema extends Record<string, unknown>>(
  client: PGlite,
  { schema, migrationsFolder }: DatabaseDefinition<TSchema>,
  options: Pick<OpenDatabaseOptions, 'logger'> = {},
): DatabaseHandle<TSchema> {
  const db = drizzlePglite({
    // With tracing on, statements inside a request get spans as on PostgreSQL (pglite-spans.ts).
    client: isTracingOn() ? withStatementSpans(client) : client,
    schema,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  return {
    db,
    driver: 'pglite',
    // One process owns a PGlite data directory, so there is nobody to race with.
    migrate: () => migratePglite(db, { migrationsFolder }),
    ping: (timeoutMs) => pingDatabase(() => db.execute(sql`select 1`), timeoutMs),
    close: async () => {
      if (!client.closed) await client.close();
    },
    withStatementTimeout: () => ({ db, close: async () => {} }),
  };
}
