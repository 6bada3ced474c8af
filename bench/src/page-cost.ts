/**
 * `pnpm --filter bench page-cost [seconds]`: what each GET of a sign-in costs our server and
 * PostgreSQL under load, page by page. The `signin` workload gives a whole sign-in's CPU; this
 * tells where it goes among the requests a browser makes that can be repeated as they are:
 * `/authorize` (a new interaction each time), the login page of one interaction, the consent page
 * of one signed-in browser, and UserInfo with one access token; the discovery document is the
 * floor (a route that reads nothing). The POSTs (password, Allow, the code exchange) are single-use
 * and stay measured inside the whole sign-in.
 *
 * Each page: autocannon, 8 connections, 2 s of warm-up, then `seconds` measured; CPU read from
 * /proc for the server (every thread) and the PostgreSQL backends of its database. Pinned like
 * `pnpm bench --pin`: the server on one CPU, this process (the load generator) on the other.
 */
import { join } from 'node:path';
import autocannon from 'autocannon';
import { connectAdmin, type DatabaseAdmin, DEFAULT_ADMIN_URL } from './databases.js';
import {
  authorizationRequestUrl,
  authorizeThroughPages,
  type CodeFlowSettings,
  CookieJar,
  exchangeCode,
  newPkce,
  parseForms,
} from './oauth-flow.js';
import { pinHarness } from './pinning.js';
import { readCpuMs } from './proc.js';
import { BENCH_DIR, type StartContext, type System, startOurs } from './targets.js';

const CONNECTIONS = 8;
const WARMUP_SECONDS = 2;

interface PageCost {
  page: string;
  perSecond: number;
  serverUs: number;
  postgresUs: number;
}

/** CPU ms so far of the server and of its database's backends. */
async function cpuOf(system: System, admin: DatabaseAdmin): Promise<{ server: number; postgres: number }> {
  const server = (await system.servers[0]?.cpuMs()) ?? 0;
  let postgres = 0;
  for (const pid of await admin.backendPids(system.databases ?? [])) postgres += (await readCpuMs(pid)) ?? 0;
  return { server, postgres };
}

async function measure(
  system: System,
  admin: DatabaseAdmin,
  seconds: number,
  page: string,
  request: { url: string; headers?: Record<string, string> },
): Promise<PageCost> {
  await autocannon({ ...request, connections: CONNECTIONS, duration: WARMUP_SECONDS });
  const before = await cpuOf(system, admin);
  const result = await autocannon({ ...request, connections: CONNECTIONS, duration: seconds });
  const after = await cpuOf(system, admin);
  const answered = result['2xx'] + result['3xx'];
  if (answered === 0 || result.non2xx > result['3xx']) {
    throw new Error(`${page}: ${result.non2xx - result['3xx']} answers other than 2xx/3xx`);
  }
  return {
    page,
    perSecond: answered / seconds,
    serverUs: ((after.server - before.server) * 1000) / answered,
    postgresUs: ((after.postgres - before.postgres) * 1000) / answered,
  };
}

function authorizeUrl(flow: CodeFlowSettings): string {
  return authorizationRequestUrl(flow, {
    state: 'page-cost',
    nonce: 'page-cost',
    codeChallenge: newPkce().challenge,
    extraParameters: { prompt: 'consent' },
  }).href;
}

/** One browser to its login page, then through the password to its consent page. */
async function pagesOfOneBrowser(flow: CodeFlowSettings) {
  const jar = new CookieJar();
  const send = async (url: URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    const cookie = jar.header(url);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    jar.store(response);
    return response;
  };
  const started = await send(new URL(authorizeUrl(flow)));
  const login = new URL(started.headers.get('location') ?? '', flow.authorizationEndpoint);
  const form = parseForms(await (await send(login)).text()).find((candidate) => candidate.method === 'post');
  if (!form) throw new Error('the login page has no form');
  const body = new URLSearchParams([...form.fields]);
  body.set('username', flow.user.username);
  body.set('password', flow.user.password);
  const posted = await send(new URL(form.action ?? login.href, login), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  const consent = new URL(posted.headers.get('location') ?? '', login);
  if (!consent.pathname.endsWith('/consent')) throw new Error(`the password led to ${consent.pathname}`);
  return {
    login: { url: login.href, headers: { cookie: jar.header(login) ?? '' } },
    consent: { url: consent.href, headers: { cookie: jar.header(consent) ?? '' } },
  };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 8);
  if (!Number.isFinite(seconds) || seconds < 1) throw new Error('usage: page-cost [seconds ≥ 1]');
  const pin = await pinHarness();
  const stamp = new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14);
  const admin = await connectAdmin(process.env.BENCH_DATABASE_URL ?? DEFAULT_ADMIN_URL);
  const context: StartContext = {
    logDir: join(BENCH_DIR, 'results', 'logs', `page-cost-${stamp}`),
    admin,
    stamp: `pagecost${stamp}`,
    ...(pin.pinned ? { serverCpu: pin.serverCpu } : {}),
  };
  const system = await startOurs(context, 'postgres', false);
  try {
    const target = system.ours?.auth;
    if (!target?.codeFlow || !target.cheapHashUser || !target.userinfoEndpoint) {
      throw new Error(`our auth server did not start: ${system.failures.map((f) => f.detail).join('; ')}`);
    }
    const flow = { ...target.codeFlow, scope: 'openid email', user: target.cheapHashUser };
    const browser = await pagesOfOneBrowser(flow);
    const tokens = await exchangeCode(
      flow,
      await authorizeThroughPages(flow, new CookieJar(), { prompt: 'consent' }),
    );
    const pages: Array<[string, { url: string; headers?: Record<string, string> }]> = [
      ['GET discovery (floor)', { url: new URL('/.well-known/openid-configuration', target.issuer).href }],
      ['GET /authorize', { url: authorizeUrl(flow) }],
      ['GET login page', browser.login],
      ['GET consent page', browser.consent],
      [
        'GET UserInfo',
        { url: target.userinfoEndpoint, headers: { authorization: `Bearer ${tokens.access_token}` } },
      ],
    ];
    console.log(
      `${pin.pinned ? `server on CPU ${pin.serverCpu}` : pin.reason}; ${CONNECTIONS} connections, ${seconds} s each`,
    );
    console.log(
      `${'page'.padEnd(24)}${'per s'.padStart(8)}${'server µs'.padStart(11)}${'postgres µs'.padStart(13)}`,
    );
    for (const [page, request] of pages) {
      const cost = await measure(system, admin, seconds, page, request);
      console.log(
        `${cost.page.padEnd(24)}${cost.perSecond.toFixed(0).padStart(8)}${cost.serverUs.toFixed(0).padStart(11)}${cost.postgresUs.toFixed(0).padStart(13)}`,
      );
    }
  } finally {
    for (const server of system.servers) await server.stop();
    await system.cleanup?.();
    await admin.dropAll();
  }
}

await main();
