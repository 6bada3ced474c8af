/**
 * CPU per Dynamic Client Registration and per Client ID Metadata Document sign-in, beside an
 * ordinary authorization code flow, measured in-process (`process.cpuUsage` around N iterations of
 * `app.inject`, PGlite in memory). A script, not a test: it prints figures and asserts nothing.
 *
 *   cd apps/auth-server && npx tsx scripts/agent-clients-cpu.ts [iterations]
 *
 * Every flow starts signed in (one SSO session), so the password hash is not in the figures. The
 * metadata document is served with `no-store` by a listener in this same process, so each sign-in
 * fetches it again (the worst case; a cached document costs no fetch) and the listener's CPU counts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

const ITERATIONS = Number(process.argv[2] ?? 200);
const REDIRECT_URI = 'http://127.0.0.1:7777/callback';
const PASSWORD = 'cpu-script-password-0123';

const documentServer = createServer((request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(
    JSON.stringify({
      client_id: `${documentOrigin}${request.url}`,
      client_name: 'Document agent',
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'none',
    }),
  );
});
await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
const documentOrigin = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}`;

const config = loadConfig({
  NODE_ENV: 'test',
  DATABASE_URL: 'pglite://memory',
  ISSUER: 'https://issuer.example.test',
  KEY_ENCRYPTION_KEY: randomBytes(32).toString('base64url'),
  LOG_LEVEL: 'silent',
  REGISTRATION_RATE_LIMIT_PER_MINUTE: '0',
});
const app = await buildApp(config, {
  logger: false,
  seed: {
    clients: [
      {
        client_id: 'native',
        client_name: 'Native app',
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'none',
        scope: 'openid',
      },
    ],
    resources: [],
    users: [{ sub: 'u-cpu', username: 'cpu', password: PASSWORD }],
    client_registration: { open: true, scope: 'openid' },
    client_id_metadata_documents: { allowed_origins: [documentOrigin], scope: 'openid' },
  },
});
await app.ready();

const cookies = new Map<string, string>();
async function send(method: 'GET' | 'POST', url: string, form?: Record<string, string>) {
  const response = await app.inject({
    method,
    url,
    headers: {
      cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form ? { payload: new URLSearchParams(form).toString() } : {}),
  });
  for (const line of ([] as string[]).concat(response.headers['set-cookie'] ?? [])) {
    const [pair] = line.split(';');
    const [name, ...value] = (pair ?? '').split('=');
    cookies.set(name!.trim(), value.join('='));
  }
  return response;
}

const hidden = (page: string) =>
  Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&amp;/g, '&'),
    ]),
  );

/** One code flow for `clientId`, answering the login and consent pages when they come. */
async function codeFlow(clientId: string): Promise<void> {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  let response = await send('GET', `/authorize?${query}`);
  let url = '/authorize';
  for (let step = 0; step < 8; step++) {
    const location = response.headers.location;
    if (typeof location === 'string') {
      if (location.startsWith(REDIRECT_URI)) break;
      url = location;
      response = await send('GET', location.replace('https://issuer.example.test', ''));
      continue;
    }
    const page = response.body;
    const answer = page.includes('name="password"')
      ? { ...hidden(page), username: 'cpu', password: PASSWORD }
      : { ...hidden(page), decision: 'approve' };
    response = await send('POST', url.replace('https://issuer.example.test', ''), answer);
  }
  const code = new URL(String(response.headers.location)).searchParams.get('code');
  const token = await send('POST', '/token', {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: code ?? '',
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
  });
  if (token.statusCode !== 200) throw new Error(`token request failed: ${token.body}`);
}

async function register(): Promise<void> {
  const response = await app.inject({
    method: 'POST',
    url: '/register',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'none' }),
  });
  if (response.statusCode !== 201) throw new Error(`registration failed: ${response.body}`);
}

async function measure(label: string, work: (index: number) => Promise<void>) {
  for (let index = 0; index < 5; index++) await work(index); // warm-up
  const start = process.cpuUsage();
  const started = performance.now();
  for (let index = 0; index < ITERATIONS; index++) await work(index);
  const used = process.cpuUsage(start);
  const cpuMs = (used.user + used.system) / 1000 / ITERATIONS;
  const wallMs = (performance.now() - started) / ITERATIONS;
  console.log(
    `${label.padEnd(48)} ${cpuMs.toFixed(2).padStart(7)} ms CPU  ${wallMs.toFixed(2).padStart(7)} ms wall`,
  );
}

await codeFlow('native'); // signs in once: every flow below rides the SSO session
console.log(`${ITERATIONS} iterations each, Node ${process.version}`);
await measure('code flow, seed public client (authorize+token)', () => codeFlow('native'));
await measure('registration (POST /register, public client)', () => register());
await measure('code flow, metadata-document client (+fetch)', (index) =>
  codeFlow(`${documentOrigin}/agent-${index % 50}.json`),
);
await app.close();
documentServer.close();
