import { ensurePgliteTemplate } from '@oidc-orders/service-kit/testing';
import { PGLITE_TEMPLATE } from './database.js';

/** Builds the migrated PGlite template once per run (see helpers/database.ts). */
export default async function setup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  await ensurePgliteTemplate(PGLITE_TEMPLATE);
}
