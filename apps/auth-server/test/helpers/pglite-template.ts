import { pgliteTemplate } from '@oidc-orders/service-kit/testing';
import { MIGRATIONS_FOLDER } from '../../src/db/client.js';
import { pgliteDatabase } from '../../src/db/pglite-client.js';

/**
 * This app's migrated PGlite template (see `@oidc-orders/service-kit/testing`): the global setup
 * writes it once per run, and every test file's in-memory database starts from it. The file name
 * carries a hash of the migrations, so a schema change produces a new template.
 */
export const PGLITE_TEMPLATE = pgliteTemplate('auth-server', MIGRATIONS_FOLDER, (client) =>
  pgliteDatabase(client).migrate(),
);
