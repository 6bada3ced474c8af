/**
 * `pnpm --filter bench directory-sign-in`: password sign-ins through the real pages for a seed
 * user and for a directory user (OpenLDAP from the auth server's slapd test fixture), one after
 * the other against the same server: latency per sign-in (p50, p95) and the server's CPU per
 * sign-in. Each sign-in is a fresh browser (no single sign-on), so every one checks a password:
 * scrypt for the seed user, a search plus a bind for the directory user (and the scrypt run that
 * equalises timing). Prints one Markdown table for bench/README.md "Directory sign-in".
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSlapd } from '@oidc-orders/service-kit/testing';
import { connectAdmin, DEFAULT_ADMIN_URL } from './databases.js';
import { authorizeThroughPages, type CodeFlowSettings, CookieJar } from './oauth-flow.js';
import { freePort, type ServerProcess, startServer } from './processes.js';
import { newIdentities, writeSeedFile } from './seed.js';

const SIGN_INS = Number(process.env.DIRECTORY_BENCH_SIGN_INS ?? 200);
const WARMUP = 20;
const REDIRECT_URI = 'http://127.0.0.1:1/signin-oidc';
const AUTH_SERVER_DIR = resolve(fileURLToPath(new URL('../../apps/auth-server', import.meta.url)));

interface Measured {
  user: string;
  p50Ms: number;
  p95Ms: number;
  cpuMsPerSignIn: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function measure(server: ServerProcess, settings: CodeFlowSettings, label: string): Promise<Measured> {
  for (let i = 0; i < WARMUP; i++) await authorizeThroughPages(settings, new CookieJar());
  const latencies: number[] = [];
  const cpuBefore = await server.cpuMs();
  for (let i = 0; i < SIGN_INS; i++) {
    const started = performance.now();
    await authorizeThroughPages(settings, new CookieJar());
    latencies.push(performance.now() - started);
  }
  const cpuMs = (await server.cpuMs()) - cpuBefore;
  latencies.sort((a, b) => a - b);
  return {
    user: label,
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    cpuMsPerSignIn: cpuMs / SIGN_INS,
  };
}

async function main(): Promise<void> {
  const slapd = await startSlapd();
  const directoryUser = { username: 'bench-ldap', password: randomBytes(12).toString('base64url') };
  await slapd.addPerson({ uid: directoryUser.username, password: directoryUser.password, cn: 'Bench LDAP' });
  const ids = newIdentities();
  const dir = await mkdtemp(join(tmpdir(), 'bench-directory-'));
  const admin = await connectAdmin(process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL);
  const port = await freePort();
  const seedFile = await writeSeedFile(dir, ids, REDIRECT_URI);
  const server = await startServer({
    name: 'auth-server (directory)',
    cwd: AUTH_SERVER_DIR,
    entry: 'src/server.ts',
    port,
    logDir: join(dir, 'logs'),
    env: {
      PORT: String(port),
      HOST: '127.0.0.1',
      ISSUER: `http://127.0.0.1:${port}`,
      DATABASE_URL: await admin.create(`directory_bench_${Date.now()}`),
      SEED_FILE: seedFile,
      KEY_ENCRYPTION_KEY: ids.keyEncryptionKey,
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      SHUTDOWN_PAUSE_MS: '0',
      // Generous limits: the benchmark signs the same two users in hundreds of times.
      LOGIN_MAX_FAILURES_PER_IP: '1000000',
      ...slapd.env(),
    },
  });
  const settings = (user: { username: string; password: string }): CodeFlowSettings => ({
    authorizationEndpoint: `${server.baseUrl}/authorize`,
    tokenEndpoint: `${server.baseUrl}/token`,
    client: ids.webClient,
    redirectUri: REDIRECT_URI,
    scope: 'openid',
    user,
  });
  try {
    const seed = await measure(server, settings(ids.user), 'seed user (scrypt)');
    const directory = await measure(server, settings(directoryUser), 'directory user (LDAP bind)');
    console.log(`${SIGN_INS} sign-ins each, one at a time, a fresh browser each (no SSO)\n`);
    console.log('| user | p50 ms | p95 ms | server CPU ms per sign-in |');
    console.log('|---|---|---|---|');
    for (const row of [seed, directory]) {
      console.log(
        `| ${row.user} | ${row.p50Ms.toFixed(1)} | ${row.p95Ms.toFixed(1)} | ${row.cpuMsPerSignIn.toFixed(1)} |`,
      );
    }
  } finally {
    await server.stop();
    await admin.dropAll();
    await slapd.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
