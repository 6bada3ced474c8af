import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MIGRATIONS_FOLDER } from '../../src/db/client.js';

/**
 * Creating a PGlite instance runs initdb (seconds); loading a dumped data directory takes a fraction
 * of that. The global setup migrates one instance and dumps it here; every test file starts its
 * in-memory database from that dump. The name carries a hash of the migrations, so a schema change
 * produces a new template.
 */
export function pgliteTemplatePath(): string {
  const hash = createHash('sha256');
  for (const file of readdirSync(MIGRATIONS_FOLDER, { recursive: true }).map(String).sort()) {
    if (file.endsWith('.sql') || file.endsWith('.json')) {
      hash.update(file).update(readFileSync(join(MIGRATIONS_FOLDER, file)));
    }
  }
  return join(tmpdir(), `auth-server-pglite-template-${hash.digest('hex').slice(0, 16)}.tar`);
}
