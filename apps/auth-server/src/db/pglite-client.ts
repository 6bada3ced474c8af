import type { PGlite } from '@electric-sql/pglite';
import type { OpenDatabaseOptions } from '@oidc-orders/service-kit';
import { pgliteDatabase as kitPgliteDatabase } from '@oidc-orders/service-kit/pglite';
import { DATABASE_DEFINITION, type DatabaseHandle } from './client.js';

/*
 * Apart from client.ts so that the server, which imports client.ts, does not load PGlite when it
 * runs on PostgreSQL (the kit imports it only for a pglite:// URL).
 */

/** A handle on an already created PGlite instance (tests start theirs from a migrated template). */
export function pgliteDatabase(
  client: PGlite,
  options: Pick<OpenDatabaseOptions, 'logger'> = {},
): DatabaseHandle {
  return kitPgliteDatabase(client, DATABASE_DEFINITION, options);
}
