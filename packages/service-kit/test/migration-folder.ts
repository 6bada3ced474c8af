import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A drizzle-kit migrations folder at `folder` holding `migrations` (tag → SQL), in order. */
export async function writeMigrationFolder(
  folder: string,
  migrations: Array<[string, string]>,
): Promise<void> {
  await mkdir(join(folder, 'meta'), { recursive: true });
  const entries = migrations.map(([tag], idx) => ({
    idx,
    version: '7',
    when: 1_700_000_000_000 + idx,
    tag,
    breakpoints: true,
  }));
  await writeFile(
    join(folder, 'meta', '_journal.json'),
    JSON.stringify({ version: '7', dialect: 'postgresql', entries }),
  );
  for (const [tag, text] of migrations) await writeFile(join(folder, `${tag}.sql`), text);
}
