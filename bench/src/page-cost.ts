/**
 * `pnpm --filter bench page-cost [seconds] [--profile] [--only=<page name part>]`: what each GET of a sign-in costs our server and
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
 * `--profile` takes the server's CPU profile of each page's measured phase only (through the V8
 * inspector, so the preparation of the single-use POSTs is not in it) and writes it to
 * results/profiles/page-cost-<stamp>/<page>.cpuprofile (read it with `profile-summary`);
 * `--only=login` measures only the pages whose name holds `login`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
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
import { InspectorSession, inspectorFlags, inspectorUrl } from './soak/inspector.js';
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

/** The server's CPU profile of one measured phase, when `--profile` asked for it. */
interface PhaseProfiler {
  around<T>(page: string, phase: () => Promise<T>): Promise<T>;
}

const NO_PROFILE: PhaseProfiler = { around: (_page, phase) => phase() };

async function inspectorProfiler(system: System, directory: string): Promise<PhaseProfiler> {
  const server = system.servers[0];
  if (!server) throw new Error('no server to profile');
  const session = await InspectorSession.connect(await inspectorUrl(server));
  await session.send('Profiler.enable');
  await mkdir(directory, { recursive: true });
  return {
    async around(page, phase) {
      await session.send('Profiler.start');
      try {
        return await phase();
      } finally {
        const { profile } = await session.send<{ profile: unknown }>('Profiler.stop');
        const file = join(
          directory,
          `${page.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')}.cpuprofile`,
        );
        await writeFile(file, JSON.stringify(profile));
        console.log(`  profile: ${file}`);
      }
    },
  };
}

async function measure(
  system: System,
  admin: DatabaseAdmin,
  profiler: PhaseProfiler,
  seconds: number,
  page: string,
  request: { url: string; headers?: Record<string, string> },
): Promise<PageCost> {
  await autocannon({ ...request, connections: CONNECTIONS, duration: WARMUP_SECONDS });
  const before = await cpuOf(system, admin);
  const result = await profiler.around(page, () =>
    autocannon({ ...request, connections: CONNECTIONS, duration: seconds }),
  );
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

/** A browser of its own: a cookie jar, redirects not followed. */
function newBrowser() {
  const jar = new CookieJar();
  return {
    cookieFor: (url: URL) => ({ cookie: jar.header(url) ?? '' }),
    async send(url: URL, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      const cookie = jar.header(url);
      if (cookie) headers.set('cookie', cookie);
      const response = await fetch(url, { ...init, headers, redirect: 'manual' });
      jar.store(response);
      return response;
    },
  };
}
type Browser = ReturnType<typeof newBrowser>;

/** A page's POST form, ready to submit with `fields` added: where it goes and what it sends. */
async function formOf(browser: Browser, page: URL, fields: Record<string, string>) {
  const form = parseForms(await (await browser.send(page)).text()).find(
    (candidate) => candidate.method === 'post',
  );
  if (!form) throw new Error(`${page.pathname} has no form`);
  const body = new URLSearchParams([...form.fields, ...Object.entries(fields)]);
  return {
    action: new URL(form.action ?? page.href, page),
    init: {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    } satisfies RequestInit,
  };
}

/** A new browser at its login page: the page, and the password form filled in. */
async function atLoginPage(flow: CodeFlowSettings) {
  const browser = newBrowser();
  const started = await browser.send(new URL(authorizeUrl(flow)));
  const page = new URL(started.headers.get('location') ?? '', flow.authorizationEndpoint);
  const form = await formOf(browser, page, { username: flow.user.username, password: flow.user.password });
  return { browser, page, form };
}

/** Submits a form; the redirect's target, which must end with `expected`. */
async function submit(browser: Browser, form: Awaited<ReturnType<typeof formOf>>, expected: string) {
  const response = await browser.send(form.action, form.init);
  const location = response.headers.get('location');
  if (response.status !== 303 || !location)
    throw new Error(`${form.action.pathname} answered ${response.status}`);
  const next = new URL(location, form.action);
  if (!`${next.origin}${next.pathname}`.endsWith(expected))
    throw new Error(`${form.action.pathname} led to ${next.pathname}`);
  return next;
}

/** A new browser signed in, at its consent page: the page, and the Allow form. */
async function atConsentPage(flow: CodeFlowSettings) {
  const { browser, form } = await atLoginPage(flow);
  const page = await submit(browser, form, '/consent');
  return { browser, page, allow: await formOf(browser, page, { decision: 'approve' }) };
}

/** `items` prepared first (their CPU not counted), then each `run` once, `CONNECTIONS` at a time. */
async function measureSingleUse<T>(
  system: System,
  admin: DatabaseAdmin,
  profiler: PhaseProfiler,
  page: string,
  count: number,
  prepare: () => Promise<T>,
  run: (item: T) => Promise<unknown>,
): Promise<PageCost> {
  const inParallel = async <R>(work: Array<() => Promise<R>>) => {
    const results: R[] = [];
    const next = async () => {
      for (let task = work.shift(); task; task = work.shift()) results.push(await task());
    };
    await Promise.all(Array.from({ length: CONNECTIONS }, next));
    return results;
  };
  const items = await inParallel(Array.from({ length: count }, () => prepare));
  const before = await cpuOf(system, admin);
  const started = performance.now();
  await profiler.around(page, () => inParallel(items.map((item) => () => run(item))));
  const seconds = (performance.now() - started) / 1000;
  const after = await cpuOf(system, admin);
  return {
    page,
    perSecond: count / seconds,
    serverUs: ((after.server - before.server) * 1000) / count,
    postgresUs: ((after.postgres - before.postgres) * 1000) / count,
  };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { profile: { type: 'boolean', default: false }, only: { type: 'string' } },
  });
  const seconds = Number(positionals[0] ?? 8);
  if (!Number.isFinite(seconds) || seconds < 1) {
    throw new Error('usage: page-cost [seconds ≥ 1] [--profile] [--only=<page name part>]');
  }
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
    ...(values.profile ? { serverNodeFlags: inspectorFlags() } : {}),
    ...(pin.pinned ? { serverCpu: pin.serverCpu } : {}),
  };
  const system = await startOurs(context, 'postgres', false);
  try {
    const target = system.ours?.auth;
    if (!target?.codeFlow || !target.cheapHashUser || !target.userinfoEndpoint) {
      throw new Error(`our auth server did not start: ${system.failures.map((f) => f.detail).join('; ')}`);
    }
    const flow = { ...target.codeFlow, scope: 'openid email', user: target.cheapHashUser };
    const profiler = values.profile
      ? await inspectorProfiler(system, join(BENCH_DIR, 'results', 'profiles', `page-cost-${stamp}`))
      : NO_PROFILE;
    const login = await atLoginPage(flow);
    const consent = await atConsentPage(flow);
    const tokens = await exchangeCode(
      flow,
      await authorizeThroughPages(flow, new CookieJar(), { prompt: 'consent' }),
    );
    const repeatable: Array<[string, { url: string; headers?: Record<string, string> }]> = [
      ['GET discovery', { url: new URL('/.well-known/openid-configuration', target.issuer).href }],
      ['GET /authorize', { url: authorizeUrl(flow) }],
      ['GET login page', { url: login.page.href, headers: login.browser.cookieFor(login.page) }],
      ['GET consent page', { url: consent.page.href, headers: consent.browser.cookieFor(consent.page) }],
      [
        'GET UserInfo',
        { url: target.userinfoEndpoint, headers: { authorization: `Bearer ${tokens.access_token}` } },
      ],
    ];
    // Single use: as many as the GETs answer in `seconds` at about 2,000/s.
    const count = Math.round(seconds * 2000);
    const singleUse: Array<[string, () => Promise<PageCost>]> = [
      [
        'POST password',
        () =>
          measureSingleUse(
            system,
            admin,
            profiler,
            'POST password',
            count,
            () => atLoginPage(flow),
            ({ browser, form }) => submit(browser, form, '/consent'),
          ),
      ],
      [
        'POST Allow',
        () =>
          measureSingleUse(
            system,
            admin,
            profiler,
            'POST Allow',
            count,
            () => atConsentPage(flow),
            ({ browser, allow }) => submit(browser, allow, flow.redirectUri),
          ),
      ],
    ];
    console.log(
      `${pin.pinned ? `server on CPU ${pin.serverCpu}` : pin.reason}; ${CONNECTIONS} connections; the GETs ${seconds} s each, the POSTs ${count} each`,
    );
    console.log(
      `${'page'.padEnd(24)}${'per s'.padStart(8)}${'server µs'.padStart(11)}${'postgres µs'.padStart(13)}`,
    );
    const show = (cost: PageCost) =>
      console.log(
        `${cost.page.padEnd(24)}${cost.perSecond.toFixed(0).padStart(8)}${cost.serverUs.toFixed(0).padStart(11)}${cost.postgresUs.toFixed(0).padStart(13)}`,
      );
    const wanted = (page: string) => values.only === undefined || page.includes(values.only);
    for (const [page, request] of repeatable) {
      if (wanted(page)) show(await measure(system, admin, profiler, seconds, page, request));
    }
    for (const [page, measureIt] of singleUse) {
      if (wanted(page)) show(await measureIt());
    }
  } finally {
    for (const server of system.servers) await server.stop();
    await system.cleanup?.();
    await admin.dropAll();
  }
}

await main();
