/**
 * `pnpm --filter bench run audit-query [-- --rows=1000000 --url=postgres://postgres@127.0.0.1:5432/postgres]`:
 * the console's and the admin API's audit queries at a million stored events. Makes a throw-away
 * database on that server, applies the auth server's migrations, fills `audit_events` in one
 * `INSERT … SELECT generate_series` (90 days, 20,000 users, 40 clients, the real event names in
 * a sign-in-heavy mix), ANALYZEs, then for each typical query prints its plan's first line, the
 * execution time EXPLAIN ANALYZE reports, and the median round trip through the store
 * (src/audit/drizzle-audit-event-store.ts) over 25 runs. Ends with one retention batch. The
 * database is dropped at the end. Markdown table for bench/README.md "Audit events".
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { AuditEventFilter } from '../../apps/auth-server/src/audit/audit-event-store.js';
import {
  auditEventPageStatement,
  createDrizzleAuditEventStore,
} from '../../apps/auth-server/src/audit/drizzle-audit-event-store.js';
import { AUDIT_EVENTS } from '../../apps/auth-server/src/audit.js';
import { openDatabase } from '../../apps/auth-server/src/db/client.js';

const options = new Map(
  process.argv.slice(2).map((arg) => {
    const [name = '', value = ''] = arg.replace(/^--/, '').split('=');
    return [name, value] as const;
  }),
);
const ROWS = Number(options.get('rows') ?? 1_000_000);
const ADMIN_URL = options.get('url') ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RUNS = 25;
const NOW = 1_800_000_000;
const DAY = 86_400;

/** The mix of a sign-in-heavy server: weights out of 100. */
const EVENT_MIX: Array<[string, number]> = [
  [AUDIT_EVENTS.loginSucceeded, 54],
  [AUDIT_EVENTS.loginFailed, 15],
  [AUDIT_EVENTS.consentGranted, 8],
  [AUDIT_EVENTS.factorSucceeded, 8],
  [AUDIT_EVENTS.logout, 6],
  [AUDIT_EVENTS.factorFailed, 3],
  [AUDIT_EVENTS.tokenRevoked, 3],
  [AUDIT_EVENTS.rateLimitExceeded, 1],
  [AUDIT_EVENTS.passwordChanged, 1],
];

function eventCase(): string {
  let upper = 0;
  const branches = EVENT_MIX.map(([event, weight]) => {
    upper += weight;
    return `when r < ${upper / 100} then '${event}'`;
  });
  return `case ${branches.join(' ')} else '${AUDIT_EVENTS.adminUserDisabled}' end`;
}

/** One statement: events spread evenly over 90 days, users and clients drawn at random. */
function fillStatement(rows: number): string {
  return `insert into audit_events (time, event, sub, client_id, ip, actor, outcome, details)
    select ${NOW} - (i::bigint * ${90 * DAY} / ${rows}), ${eventCase()},
      'u-' || floor(random() * 20000)::int, 'client-' || floor(random() * random() * 40)::int,
      '10.0.' || floor(random() * 250)::int || '.' || floor(random() * 250)::int, null,
      case when r >= 0.54 and r < 0.69 then 'failure' else 'success' end,
      jsonb_build_object('method', 'pwd')
    from (select i, random() as r from generate_series(1, ${rows}) as i) as series`;
}

interface NamedQuery {
  name: string;
  filter: AuditEventFilter;
}

function typicalQueries(lastPageCursor: string | undefined): NamedQuery[] {
  const queries: NamedQuery[] = [
    { name: 'newest 50, no filter', filter: { limit: 50 } },
    { name: 'one user (sub), newest 50', filter: { sub: 'u-4242', limit: 50 } },
    { name: 'one client, newest 50', filter: { clientId: 'client-7', limit: 50 } },
    { name: 'event auth.login.failed, newest 50', filter: { event: AUDIT_EVENTS.loginFailed, limit: 50 } },
    { name: 'rare event (1 %), newest 50', filter: { event: AUDIT_EVENTS.adminUserDisabled, limit: 50 } },
    {
      name: 'user + event, newest 50',
      filter: { sub: 'u-4242', event: AUDIT_EVENTS.loginFailed, limit: 50 },
    },
    {
      name: 'client + last 24 h, newest 50',
      filter: { clientId: 'client-7', since: NOW - DAY, until: NOW + 1, limit: 50 },
    },
    {
      name: 'event + a day 30 days ago',
      filter: { event: AUDIT_EVENTS.loginFailed, since: NOW - 31 * DAY, until: NOW - 30 * DAY, limit: 50 },
    },
    { name: 'one user, account page (10)', filter: { sub: 'u-4242', limit: 10 } },
  ];
  if (lastPageCursor)
    queries.push({
      name: 'one client, page 2 (cursor)',
      filter: { clientId: 'client-7', cursor: lastPageCursor, limit: 50 },
    });
  return queries;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const name = `audit_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ driver: 'pg', connectionString: url.toString() });
  const direct = new pg.Client({ connectionString: url.toString() });
  await direct.connect();
  try {
    await database.migrate();
    const loadStart = loadavg()[0]?.toFixed(2);
    const fillStarted = performance.now();
    await direct.query(fillStatement(ROWS));
    await direct.query('analyze audit_events');
    const fillSeconds = ((performance.now() - fillStarted) / 1000).toFixed(1);
    const store = createDrizzleAuditEventStore(database.db);
    const firstClientPage = await store.query({ clientId: 'client-7', limit: 50 });

    console.log(`${ROWS} rows written and analysed in ${fillSeconds} s; load average ${loadStart}\n`);
    console.log('| query | plan | EXPLAIN ANALYZE execution | median round trip (25 runs) | rows |');
    console.log('| --- | --- | ---: | ---: | ---: |');
    for (const query of typicalQueries(firstClientPage.nextCursor)) {
      const { sql, params } = auditEventPageStatement(database.db, query.filter).toSQL();
      const explained = await direct.query(`explain (analyze, buffers) ${sql}`, params);
      const lines = explained.rows.map((row: Record<string, string>) => row['QUERY PLAN'] ?? '');
      const plan =
        lines
          .find((line) => /Index|Seq Scan|Bitmap/.test(line))
          ?.trim()
          .replace(/\s+\(cost.*$/, '') ?? '';
      const execution = lines
        .find((line) => line.startsWith('Execution Time'))
        ?.replace('Execution Time: ', '');
      const times: number[] = [];
      let found = 0;
      for (let run = 0; run < RUNS; run += 1) {
        const started = performance.now();
        found = (await store.query(query.filter)).events.length;
        times.push(performance.now() - started);
      }
      console.log(`| ${query.name} | ${plan} | ${execution} | ${median(times).toFixed(2)} ms | ${found} |`);
    }
    const retentionStarted = performance.now();
    const deleted = await store.deleteOlderThan(NOW - 89 * DAY);
    console.log(
      `\nretention: deleted ${deleted} rows older than 89 days in ${(performance.now() - retentionStarted).toFixed(0)} ms (batches of 5,000); load average ${loadavg()[0]?.toFixed(2)}`,
    );
  } finally {
    await direct.end();
    await database.close();
    await admin.query(`drop database if exists ${name}`);
    await admin.end();
  }
}

await main();
