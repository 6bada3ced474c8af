import { existsSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { pgliteDatabase } from '../../src/db/client.js';
import { pgliteTemplatePath } from './pglite-template.js';

/** Builds the migrated PGlite template once per run (see pglite-template.ts). */
export default async function setup(): Promise<void> {
  if (process.env.TEST_DATABASE_URL) return;
  const path = pgliteTemplatePath();
  if (existsSync(path)) return;
  const client = await PGlite.create();
  const database = pgliteDatabase(client);
  await database.migrate();
  const dump = await client.dumpDataDir('none');
  await client.close();
  // Write then rename, so a concurrent run never reads half a file.
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, Buffer.from(await dump.arrayBuffer()));
  await rename(temporary, path);
}
