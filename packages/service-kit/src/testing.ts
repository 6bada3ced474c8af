/**
 * Test support for both apps (export `@oidc-orders/service-kit/testing`): in-memory PGlite
 * databases for test files, fast. Never import this from production code.
 *
 * Creating a PGlite instance runs initdb and the migrations (seconds); loading a dumped data
 * directory takes most of a second; emptying an instance that a finished test file handed back
 * takes milliseconds. So a vitest `globalSetup` migrates one instance and dumps it to a template
 * file, and each worker keeps a few idle instances: `acquirePglite` hands out an idle one, or a new
 * one loaded from the template; `release` revokes the test's access, empties the instance back to
 * the template's state and keeps it for the next file (the unit tier shares one worker's modules
 * across files, so this pool outlives a file). An instance that does not come back exactly as the
 * template (another schema, a test's own table) is closed instead of reused.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/** Migrates a fresh instance (the app's own migrator, e.g. `pgliteDatabase(client, …).migrate()`). */
export type MigratePglite = (client: PGlite) => Promise<void>;

export interface PgliteTemplate {
  /** A file in the system's temporary directory; its name carries a hash of the migrations. */
  path: string;
  migrate: MigratePglite;
}

/** The template for an app's migrations folder: a schema change yields a new file name. */
export function pgliteTemplate(
  name: string,
  migrationsFolder: string,
  migrate: MigratePglite,
): PgliteTemplate {
  const hash = createHash('sha256');
  for (const file of readdirSync(migrationsFolder, { recursive: true }).map(String).sort()) {
    if (file.endsWith('.sql') || file.endsWith('.json')) {
      hash.update(file).update(readFileSync(join(migrationsFolder, file)));
    }
  }
  return { path: join(tmpdir(), `${name}-pglite-template-${hash.digest('hex').slice(0, 16)}.tar`), migrate };
}

/** Writes the template unless it exists; call from a vitest globalSetup (once per run). */
export async function ensurePgliteTemplate(template: PgliteTemplate): Promise<void> {
  if (existsSync(template.path)) return;
  const client = await PGlite.create();
  try {
    await template.migrate(client);
    const dump = await client.dumpDataDir('none');
    // Write then rename, so a concurrent run never reads half a file.
    const temporary = `${template.path}.${process.pid}.tmp`;
    await writeFile(temporary, Buffer.from(await dump.arrayBuffer()));
    await rename(temporary, template.path);
  } finally {
    await client.close();
  }
}

/** A database lent to one test file. */
export interface LentPglite {
  /** Behaves as a PGlite instance; `close()` only ends this loan (queries then fail as on a closed one). */
  client: PGlite;
  /** Ends the loan and gives the instance back to the pool; idempotent. */
  release(): Promise<void>;
}

/** Idle instances kept per template: each holds 100+ MB, and a file rarely uses more than two at once. */
const MAX_IDLE = 2;

interface Pool {
  idle: PGlite[];
  /** Computed from the first instance loaded from the template. */
  baseline: Promise<TemplateBaseline> | undefined;
}

const pools = new Map<string, Pool>();

export async function acquirePglite(template: PgliteTemplate): Promise<LentPglite> {
  const pool = poolFor(template.path);
  const client = pool.idle.pop() ?? (await loadFromTemplate(template));
  pool.baseline ??= readBaseline(client);
  await pool.baseline;
  return lend(client, () => giveBack(pool, client));
}

function poolFor(path: string): Pool {
  let pool = pools.get(path);
  if (!pool) {
    pool = { idle: [], baseline: undefined };
    pools.set(path, pool);
  }
  return pool;
}

async function loadFromTemplate(template: PgliteTemplate): Promise<PGlite> {
  await ensurePgliteTemplate(template);
  return PGlite.create({ loadDataDir: new Blob([await readFile(template.path)]) });
}

/**
 * A view of `client` that stops working when the loan ends: a statement the finished file's app
 * still sends afterwards (a late audit write) fails as on a closed database instead of landing in
 * the next file's data. Its `close()` ends the loan, as closing a real instance would.
 */
function lend(client: PGlite, giveBackOnce: () => Promise<void>): LentPglite {
  let revoked = false;
  let returned: Promise<void> | undefined;
  const revoke = () => {
    revoked = true;
  };
  const view = new Proxy(client, {
    get(target, property) {
      if (property === 'closed') return revoked || target.closed;
      if (property === 'close') return async () => revoke();
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        // PGlite's own message, which isDatabaseUnavailable() recognises.
        if (revoked) return Promise.reject(new Error('PGlite is closed'));
        return (value as (...parameters: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    client: view,
    release() {
      revoke();
      returned ??= giveBackOnce();
      return returned;
    },
  };
}

async function giveBack(pool: Pool, client: PGlite): Promise<void> {
  if (client.closed) return;
  const baseline = await pool.baseline;
  const reusable =
    baseline !== undefined &&
    pool.idle.length < MAX_IDLE &&
    (await resetToBaseline(client, baseline).catch(() => false));
  if (reusable) pool.idle.push(client);
  else await client.close().catch(() => {});
}

/** What an instance looks like right after loading the template. */
interface TemplateBaseline {
  fingerprint: string;
  /** Statements that bring the data back to the template's (no rows, sequences as they were). */
  resetStatements: string;
  /** Reuse is off when the template itself holds rows outside the migration journal. */
  reusable: boolean;
}

/** drizzle-kit's migration journal lives in schema `drizzle`; it is kept, every other table emptied. */
const KEPT_SCHEMA = 'drizzle';

const USER_SCHEMAS = `n.nspname not in ('pg_catalog', 'information_schema')
  and n.nspname not like 'pg\\_toast%' and n.nspname not like 'pg\\_temp%'`;

async function readBaseline(client: PGlite): Promise<TemplateBaseline> {
  const tables = await client.query<{ name: string; kept: boolean }>(
    `select format('%I.%I', n.nspname, c.relname) as name, n.nspname = $1 as kept
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and ${USER_SCHEMAS} order by 1`,
    [KEPT_SCHEMA],
  );
  const emptied = tables.rows.filter((table) => !table.kept).map((table) => table.name);
  const sequences = await client.query<{ name: string; value: string; called: boolean }>(
    `select format('%I.%I', schemaname, sequencename) as name,
            coalesce(last_value, start_value)::text as value, last_value is not null as called
       from pg_sequences where schemaname <> $1 order by 1`,
    [KEPT_SCHEMA],
  );
  const holdsRows = await anyRows(client, emptied);
  const resetStatements = [
    ...(emptied.length > 0 ? [`truncate table ${emptied.join(', ')} restart identity cascade`] : []),
    ...sequences.rows.map(
      (sequence) => `select setval('${sequence.name}', ${sequence.value}, ${sequence.called})`,
    ),
  ].join(';\n');
  return { fingerprint: await fingerprint(client), resetStatements, reusable: !holdsRows };
}

async function anyRows(client: PGlite, tables: string[]): Promise<boolean> {
  for (const table of tables) {
    if ((await client.query(`select 1 from ${table} limit 1`)).rows.length > 0) return true;
  }
  return false;
}

/** Empties the data and the session state, then checks the schema is the template's. */
async function resetToBaseline(client: PGlite, baseline: TemplateBaseline): Promise<boolean> {
  if (!baseline.reusable) return false;
  // A transaction the file left open would block DISCARD ALL (it cannot run inside one).
  await client.exec('rollback');
  // Settings, prepared statements, temporary tables, advisory locks, LISTEN: as a new session.
  await client.exec('discard all');
  if (baseline.resetStatements) await client.exec(baseline.resetStatements);
  return (await fingerprint(client)) === baseline.fingerprint;
}

/**
 * A digest of everything a test could have changed besides rows: relations, columns, constraints,
 * indexes, functions, triggers, enum labels, extensions, schemas, roles, and the migration journal.
 */
async function fingerprint(client: PGlite): Promise<string> {
  const result = await client.query<{ digest: string }>(
    `select md5(coalesce(string_agg(item, E'\\n' order by item), '')) as digest from (
       select format('rel %I.%I %s', n.nspname, c.relname, c.relkind) as item
         from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${USER_SCHEMAS}
       union all
       select format('col %s.%I %s %s %s', c.oid::regclass, a.attname, format_type(a.atttypid, a.atttypmod),
                     a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
         from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
         left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
        where a.attnum > 0 and not a.attisdropped and ${USER_SCHEMAS}
       union all
       select format('con %I %I %s', n.nspname, k.conname, pg_get_constraintdef(k.oid))
         from pg_constraint k join pg_namespace n on n.oid = k.connamespace where ${USER_SCHEMAS}
       union all
       select format('idx %s', pg_get_indexdef(i.indexrelid))
         from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
        where ${USER_SCHEMAS}
       union all
       select format('fn %s %s', p.oid::regprocedure, md5(p.prosrc))
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace where ${USER_SCHEMAS}
       union all
       select format('trg %s', pg_get_triggerdef(t.oid)) from pg_trigger t where not t.tgisinternal
       union all
       select format('enum %s %s', e.enumtypid::regtype, e.enumlabel) from pg_enum e
       union all
       select format('ext %s %s', extname, extversion) from pg_extension
       union all
       select format('schema %s', nspname) from pg_namespace
       union all
       select format('role %s', rolname) from pg_roles
     ) items`,
  );
  return (result.rows[0]?.digest ?? '') + (await journalDigest(client));
}

/** The kept journal's rows, so a test that writes to it is noticed too. */
async function journalDigest(client: PGlite): Promise<string> {
  const tables = await client.query<{ name: string }>(
    `select format('%I.%I', schemaname, tablename) as name from pg_tables where schemaname = $1 order by 1`,
    [KEPT_SCHEMA],
  );
  let digest = '';
  for (const { name } of tables.rows) {
    const rows = await client.query<{ digest: string }>(
      `select md5(coalesce(string_agg(t::text, ',' order by t::text), '')) as digest from ${name} t`,
    );
    digest += `:${rows.rows[0]?.digest ?? ''}`;
  }
  return digest;
}
