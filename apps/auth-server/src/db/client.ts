import { fileURLToPath } from 'node:url';
import {
  type Database,
  type DatabaseLocation,
  type DatabaseHandle as KitDatabaseHandle,
  type OpenDatabaseOptions,
  openDatabase as openKitDatabase,
} from '@oidc-orders/service-kit';
import * as schema from './schema.js';

/**
 * One Drizzle code path for both drivers: everything outside this file is typed on `PgDatabase`,
 * which node-postgres, PGlite and a transaction (`PgTransaction extends PgDatabase`) all satisfy.
 */
export type AppDatabase = Database<typeof schema>;
export type DatabaseHandle = KitDatabaseHandle<typeof schema>;

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** This app's schema and migrations; the lock key only has to be the same in every instance. */
export const DATABASE_DEFINITION = {
  schema,
  migrationsFolder: MIGRATIONS_FOLDER,
  migrationLockKey: 4_000_001,
};

export function openDatabase(
  location: DatabaseLocation,
  options: Pick<OpenDatabaseOptions, 'onIdleConnectionError' | 'shareOnLoopback' | 'logger'> = {},
): Promise<DatabaseHandle> {
  // Fail fast while the database is down, so requests get 503 instead of hanging.
  return openKitDatabase(location, DATABASE_DEFINITION, {
    ...options,
    maxConnections: 10,
    connectTimeoutMs: 3000,
  });
}
