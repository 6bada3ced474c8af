/**
 * The PGlite pool of the test kit (`@oidc-orders/service-kit/testing`): in-memory PGlite
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
import { assertTestFileMayOpenDatabase } from './database-tier.js';

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
  assertTestFileMayOpenDatabase();
  const pool = poolFor(template.path);
  const client = pool.idle.pop() ?? (await loadFromTemplate(template));
  try {
    pool.baseline ??= readBaseline(client);
    await pool.baseline;
  } catch (error) {
    // The next file tries again rather than failing on this rejection for the rest of the run.
    pool.baseline = undefined;
    await client.close().catch(() => {});
    throw error;
  }
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

/** What an instance looks like right after loading the template, and the queries that compare. */
interface TemplateBaseline {
  /** Lists the emptied tables that hold rows (one round trip instead of a TRUNCATE of every table). */
  tablesWithRows: string;
  /** Reads every sequence outside the journal as `setval` arguments (`name`, `state`). */
  sequenceStates: string;
  sequences: Map<string, string>;
  /** See catalogSignature(). */
  signatureQuery: string;
  signature: string;
  /** Reuse is off when the template itself holds rows outside the migration journal. */
  reusable: boolean;
}

/** drizzle-kit's migration journal lives in schema `drizzle`; it is kept, every other table emptied. */
const KEPT_SCHEMA = 'drizzle';

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** `select …` for each item, as one statement (one round trip); `none` when there is no item. */
const unionAll = (selects: string[], none: string) =>
  selects.length > 0 ? selects.join(' union all ') : none;

async function readBaseline(client: PGlite): Promise<TemplateBaseline> {
  const relations = await client.query<{ name: string; kind: string; kept: boolean }>(
    `select format('%I.%I', n.nspname, c.relname) as name, c.relkind::text as kind, n.nspname = $1 as kept
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p', 'S') and n.nspname not in ('pg_catalog', 'information_schema') order by 1`,
    [KEPT_SCHEMA],
  );
  const of = (kind: string, kept: boolean) =>
    relations.rows.filter((row) => row.kind === kind && row.kept === kept).map((row) => row.name);
  const tablesWithRows = unionAll(
    of('r', false)
      .concat(of('p', false))
      .map((name) => `select ${literal(name)} as name where exists (select 1 from ${name})`),
    'select null::text as name where false',
  );
  const sequenceStates = unionAll(
    of('S', false).map(
      (name) =>
        `select ${literal(name)} as name, format('%s, %s', last_value, is_called::text) as state from ${name}`,
    ),
    'select null::text as name, null::text as state where false',
  );
  const signatureQuery = catalogSignatureQuery(of('r', true));
  const holdsRows = (await client.query(tablesWithRows)).rows.length > 0;
  return {
    tablesWithRows,
    sequenceStates,
    sequences: await readSequences(client, sequenceStates),
    signatureQuery,
    signature: await catalogSignature(client, signatureQuery),
    reusable: !holdsRows,
  };
}

async function readSequences(client: PGlite, query: string): Promise<Map<string, string>> {
  const result = await client.query<{ name: string; state: string }>(query);
  return new Map(result.rows.map(({ name, state }) => [name, state]));
}

/** Empties the data and the session state, then checks the schema is still the template's. */
async function resetToBaseline(client: PGlite, baseline: TemplateBaseline): Promise<boolean> {
  if (!baseline.reusable) return false;
  // A transaction the file left open would block DISCARD ALL (it cannot run inside one).
  await client.exec('rollback');
  // Settings, prepared statements, temporary tables, advisory locks, LISTEN: as a new session.
  await client.exec('discard all');
  const filled = (await client.query<{ name: string }>(baseline.tablesWithRows)).rows.map((row) => row.name);
  if (filled.length > 0) await client.exec(`truncate table ${filled.join(', ')} cascade`);
  const statements: string[] = [];
  for (const [name, state] of await readSequences(client, baseline.sequenceStates)) {
    const original = baseline.sequences.get(name);
    if (original !== undefined && original !== state) {
      statements.push(`select setval(${literal(name)}, ${original})`);
    }
  }
  if (statements.length > 0) await client.exec(statements.join(';\n'));
  return (await catalogSignature(client, baseline.signatureQuery)) === baseline.signature;
}

async function catalogSignature(client: PGlite, query: string): Promise<string> {
  return JSON.stringify((await client.query(query, [], { rowMode: 'array' })).rows);
}

/**
 * A query whose answer changes when a test changed the schema (or roles, functions, types,
 * extensions, the migration journal), not when it changed the data. DDL inserts, deletes or updates
 * catalog rows, and an updated row gets a newer xmin; TRUNCATE and setval touch only pg_class's
 * storage columns, left out. Counts and sums rather than a digest of every definition: a few
 * milliseconds per file instead of ~50.
 */
function catalogSignatureQuery(journalTables: string[]): string {
  // pg_attribute, pg_index and pg_sequence have no oid column; their rows are counted all the same.
  const withoutOid = new Set(['pg_attribute', 'pg_index', 'pg_sequence']);
  // A session's temporary schemas stay once created; DISCARD ALL empties them, so they do not count.
  const where = (catalog: string) =>
    catalog === 'pg_namespace'
      ? ` where nspname not like 'pg\\_temp\\_%' and nspname not like 'pg\\_toast\\_temp\\_%'`
      : '';
  const rowVersions = (catalog: string) =>
    `select '${catalog}', count(*)::text, ${withoutOid.has(catalog) ? "''" : 'sum(oid::int8)::text'},
            sum(xmin::text::int8)::text from ${catalog}${where(catalog)}`;
  return [
    `select 'pg_class', count(*)::text, sum(oid::int8)::text,
            sum(hashtext(relname) + relnamespace::int8 + ascii(relkind::text))::text
       from pg_class where relpersistence <> 't'`,
    ...[
      'pg_attribute',
      'pg_attrdef',
      'pg_constraint',
      'pg_index',
      'pg_proc',
      'pg_trigger',
      'pg_type',
      'pg_enum',
      'pg_namespace',
      'pg_extension',
      'pg_authid',
      'pg_event_trigger',
      'pg_rewrite',
      'pg_sequence',
    ].map(rowVersions),
    // The kept journal's rows, so a test that writes to it is noticed too.
    ...journalTables.map(
      (name) =>
        `select ${literal(name)}, count(*)::text, '', md5(coalesce(string_agg(t::text, ',' order by t::text), ''))
           from ${name} t`,
    ),
  ].join(' union all ');
}
