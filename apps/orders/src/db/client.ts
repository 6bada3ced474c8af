import { fileURLToPath } from 'node:url';
import {
  DatabaseUnavailableError,
  type BoundedDatabase as KitBoundedDatabase,
  type Database as KitDatabase,
  type DatabaseHandle as KitDatabaseHandle,
  type OpenDatabaseOptions,
  openDatabase as openKitDatabase,
  parseDatabaseUrl,
} from '@oidc-orders/service-kit';
import * as schema from './schema.js';

/**
 * The one type every repository takes. Both drivers' databases and their transactions
 * (PgTransaction extends PgDatabase) are assignable to it, so there is a single Drizzle code path
 * above the driver.
 */
export type AppDatabase = KitDatabase<typeof schema>;
export type DatabaseHandle = KitDatabaseHandle<typeof schema>;
export type BoundedDatabase = KitBoundedDatabase<typeof schema>;

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url));

/**
 * This app's schema and migrations. The lock key is arbitrary but fixed: every instance of this
 * service takes the same advisory lock, so instances starting together migrate one after the other.
 */
export const DATABASE_DEFINITION = {
  schema,
  migrationsFolder: MIGRATIONS_FOLDER,
  migrationLockKey: 7_240_118_001,
};

export async function openDatabase(
  url: string,
  options: OpenDatabaseOptions & { connectTimeoutMs: number },
): Promise<DatabaseHandle> {
  const location = parseDatabaseUrl(url);
  if (!location) throw new DatabaseUnavailableError('DATABASE_URL is not a postgres:// or pglite:// URL');
  return openKitDatabase(location, DATABASE_DEFINITION, options);
}
