/**
 * Server time of each operator console page (Fastify's `reply.elapsedTime`: from the request to
 * the last byte handed to the socket, guard and database included), with a populated database:
 * USERS users, EVENTS stored audit events over the last day, SESSIONS live SSO sessions. A script,
 * not a test: it prints figures and asserts nothing.
 *
 *   cd apps/auth-server && npx tsx scripts/console-page-times.ts [users] [events] [sessions]
 *
 * DATABASE_URL picks the database (default `pglite://memory`; a PostgreSQL database is emptied of
 * nothing, so give it a fresh one). The operator signs in once (password and TOTP) by plain HTTP.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { Secret, TOTP } from 'otpauth';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const USERS = Number(process.argv[2] ?? 10_000);
const EVENTS = Number(process.argv[3] ?? 200_000);
const SESSIONS = Number(process.argv[4] ?? 1_000);
const RUNS = 30;
const PASSWORD = 'console-times-password-0123';
const TOTP_SECRET = new Secret({ size: 20 }).base32;

const config = loadConfig({
  NODE_ENV: 'test',
  DATABASE_URL: process.env.DATABASE_URL ?? 'pglite://memory',
  ISSUER: 'https://issuer.example.test',
  KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  LOG_LEVEL: 'silent',
});
const app = await buildApp(config, {
  logger: false,
  seed: {
    clients: [
      {
        client_id: 'web',
        client_secret: 'console-times-client-secret-0123',
        redirect_uris: ['https://web.example.test/callback'],
        scope: 'openid profile',
      },
    ],
    users: [{ sub: 'u-operator', username: 'operator', password: PASSWORD, totp_secret: TOTP_SECRET }],
    admins: ['operator'],
  },
});
const serverTimes: number[] = [];
app.addHook('onResponse', async (_request, reply) => {
  serverTimes.push(reply.elapsedTime);
});
await app.ready();

async function populate() {
  const db = app.database.db;
  const now = Math.floor(Date.now() / 1000);
  await db.execute(sql`insert into users (sub, username, password_hash, name, email, updated_at, managed_by)
    select 'u-' || n, 'user-' || n, 'scrypt$unused', 'User ' || n, 'user-' || n || '@example.test', ${now}, 'operator'
    from generate_series(1, ${USERS}) as n`);
  await db.execute(sql`insert into audit_events (time, event, sub, client_id, ip, outcome, details)
    select ${now} - (n % 86400),
      case when n % 5 = 0 then 'auth.login.failed' else 'auth.login.succeeded' end,
      'u-' || (n % ${USERS} + 1), 'web', '192.0.2.' || (n % 250),
      case when n % 5 = 0 then 'failure' else 'success' end, '{}'::jsonb
    from generate_series(1, ${EVENTS}) as n`);
  await db.execute(sql`insert into sso_sessions (id, key_hash, sub, auth_time, methods, created_at, expires_at)
    select 's-' || n, md5('k' || n), 'u-' || (n % ${USERS} + 1), ${now} - n, '[{"method":"password","at":0}]'::jsonb,
      ${now} - n, ${now} + 3600
    from generate_series(1, ${SESSIONS}) as n`);
  // As autovacuum would have by now: statistics, and the visibility map that lets counts read the index only.
  await db.execute(sql`vacuum analyze`);
}

/** A cookie-keeping client over `app.inject`. */
const cookies = new Map<string, string>();
async function request(method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
  const response = await app.inject({
    method,
    url,
    headers: {
      cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
  });
  for (const set of response.cookies) cookies.set(set.name, set.value);
  return response;
}
const hidden = (page: string) =>
  Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]),
  ) as Record<string, string>;

async function signIn() {
  const start = await request('GET', '/admin');
  const loginUrl = start.headers.location as string;
  const login = await request('GET', loginUrl);
  const afterPassword = await request('POST', new URL(loginUrl, config.issuer).pathname, {
    ...hidden(login.body),
    username: 'operator',
    password: PASSWORD,
  });
  const otpUrl = afterPassword.headers.location as string;
  const otp = await request('GET', otpUrl);
  const code = TOTP.generate({ secret: Secret.fromBase32(TOTP_SECRET) });
  await request('POST', new URL(otpUrl, config.issuer).pathname, { ...hidden(otp.body), otp: code });
  const overview = await request('GET', '/admin');
  if (overview.statusCode !== 200) throw new Error(`not signed in to the console: ${overview.statusCode}`);
}

const PAGES = [
  '/admin',
  '/admin/users',
  '/admin/users?q=user-4242',
  '/admin/users/u-4242',
  '/admin/sessions',
  '/admin/clients',
  '/admin/clients/web',
  '/admin/keys',
  '/admin/audit',
  '/admin/audit?sub=u-4242',
  '/admin/audit?event=auth.login.failed',
  '/admin/seed-plan',
];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];

await populate();
await signIn();
// The sign-in's last request was the first overview: every hour counted from the audit events.
console.log(`first /admin (every hour counted): ${serverTimes.at(-1)?.toFixed(1)} ms`);
console.log(
  `console page server times, ms (${RUNS} requests each after 3 warm-ups; ${USERS} users, ${EVENTS} audit events, ${SESSIONS} sessions; ${config.database.driver})`,
);
for (const path of PAGES) {
  for (let warm = 0; warm < 3; warm++) await request('GET', path);
  serverTimes.length = 0;
  for (let run = 0; run < RUNS; run++) {
    const response = await request('GET', path);
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.statusCode}`);
  }
  const sorted = [...serverTimes].sort((a, b) => a - b);
  console.log(
    `${path.padEnd(40)} median ${percentile(sorted, 0.5)?.toFixed(1)}  p95 ${percentile(sorted, 0.95)?.toFixed(1)}`,
  );
}
await app.close();
