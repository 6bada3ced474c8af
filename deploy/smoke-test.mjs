#!/usr/bin/env node
// Signs in once through the deployed gateway, as a browser would, and checks what the gateway is
// responsible for: redirects on the public https origins, the redirect URI built from the forwarded
// scheme and host, and the session cookie surviving the proxy. Node's standard library only (and
// jsonc-parser from the workspace when it reads deploy/seed.json).
//
//   node deploy/smoke-test.mjs
//
// Reads ORDERS_HOST from .env, the first seeded user's plain-text password from deploy/seed.json
// and trusts deploy/certs/gateway.crt. Overrides: ORDERS_URL (e.g. https://orders.example.test:8443),
// SMOKE_USERNAME, SMOKE_PASSWORD, SMOKE_CA_FILE (empty: the system's CAs only), SMOKE_CONNECT_TO
// (curl's --connect-to, comma-separated HOST:PORT:CONNECT_HOST:CONNECT_PORT: requests to HOST:PORT
// go to CONNECT_HOST:CONNECT_PORT with the URL's Host header and TLS server name, so the names
// need not resolve; e.g. orders.example.test:443:127.0.0.1:8443).
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readIfExists = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : undefined);

const dotenv = Object.fromEntries(
  (readIfExists(join(root, '.env')) ?? '')
    .split('\n')
    .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line))
    .filter(Boolean)
    .map((match) => [match[1], match[2]]),
);
/**
 * deploy/seed.json is JSON with comments (JSONC), read with the auth server's own parser
 * (`jsonc-parser`, there after `npx pnpm install`); only needed without SMOKE_USERNAME/SMOKE_PASSWORD.
 */
function firstSeededUser() {
  const text = readIfExists(join(root, 'deploy/seed.json'));
  if (text === undefined) return undefined;
  let parseJsonc;
  try {
    ({ parse: parseJsonc } = createRequire(join(root, 'apps/auth-server/package.json'))('jsonc-parser'));
  } catch {
    fail('deploy/seed.json is JSONC: run `npx pnpm install` first, or set SMOKE_USERNAME and SMOKE_PASSWORD');
  }
  const errors = [];
  const seed = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) fail(`deploy/seed.json: syntax error at offset ${errors[0].offset}`);
  return seed?.users?.find((user) => typeof user.password === 'string');
}
const seedUser = process.env.SMOKE_USERNAME && process.env.SMOKE_PASSWORD ? undefined : firstSeededUser();
const ordersUrl = (
  process.env.ORDERS_URL ?? `https://${dotenv.ORDERS_HOST ?? 'orders.example.test'}`
).replace(/\/+$/, '');
const username = process.env.SMOKE_USERNAME ?? seedUser?.username;
const password = process.env.SMOKE_PASSWORD ?? seedUser?.password;
const caFile = process.env.SMOKE_CA_FILE ?? join(root, 'deploy/certs/gateway.crt');
const ca = caFile ? readFileSync(caFile, 'utf8') : undefined;
const connectTo = new Map(
  (process.env.SMOKE_CONNECT_TO ?? '')
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const [host, port, connectHost, connectPort] = entry.split(':');
      return [`${host}:${port}`, { host: connectHost, port: Number(connectPort) }];
    }),
);

function fail(message) {
  console.error(`smoke test FAILED: ${message}`);
  process.exit(1);
}
function check(condition, message) {
  if (!condition) fail(message);
}
if (!username || !password)
  fail('no user: set SMOKE_USERNAME and SMOKE_PASSWORD (or seed one in deploy/seed.json)');

/** host name → Map(cookie name → value); every Set-Cookie is kept for attribute checks. */
const jar = new Map();
const received = [];

function send(url, { method = 'GET', form } = {}) {
  const target = new URL(url);
  const headers = {};
  const cookies = jar.get(target.hostname);
  if (cookies?.size) headers.cookie = [...cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  const body = form ? new URLSearchParams(form).toString() : undefined;
  if (body) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const route = connectTo.get(`${target.hostname}:${target.port || 443}`);
    const destination = route && {
      hostname: route.host,
      port: route.port,
      servername: target.hostname,
      headers: { ...headers, host: target.host },
    };
    const options = { method, headers, ca, agent: false, timeout: 15_000, ...destination };
    const req = request(target, options, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        for (const raw of res.headers['set-cookie'] ?? []) {
          const [pair, ...attributes] = raw.split(';').map((part) => part.trim());
          const name = pair.slice(0, pair.indexOf('='));
          const value = pair.slice(pair.indexOf('=') + 1);
          received.push({ host: target.hostname, name, attributes: attributes.map((a) => a.toLowerCase()) });
          const hostCookies = jar.get(target.hostname) ?? new Map();
          jar.set(target.hostname, hostCookies);
          if (value === '' || attributes.some((a) => /^max-age=0$/i.test(a))) hostCookies.delete(name);
          else hostCookies.set(name, value);
        }
        const location = res.headers.location;
        resolve({
          url: target,
          status: res.statusCode,
          rawLocation: location,
          location: location === undefined ? undefined : new URL(location, target),
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${target}`)));
    req.on('error', reject);
    req.end(body);
  });
}

const hops = [];
async function follow(url) {
  let response = await send(url);
  hops.push(response);
  for (let i = 0; response.status >= 300 && response.status < 400 && response.location; i++) {
    check(i < 10, 'too many redirects');
    response = await send(response.location);
    hops.push(response);
  }
  return response;
}

const unescapeHtml = (value) =>
  value.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (e) => ({ '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" })[e],
  );
function postForm(html) {
  const form = /<form\b[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  check(form, `no form in the page: ${html.slice(0, 300)}`);
  const action = /\baction="([^"]*)"/i.exec(form[0].slice(0, form[0].indexOf('>') + 1))?.[1];
  const hidden = {};
  for (const [tag] of form[1].matchAll(/<input\b[^>]*>/gi)) {
    const name = /\bname="([^"]*)"/i.exec(tag)?.[1];
    if (name && /\btype="hidden"/i.test(tag))
      hidden[name] = unescapeHtml(/\bvalue="([^"]*)"/i.exec(tag)?.[1] ?? '');
  }
  return { action: action && unescapeHtml(action), hidden };
}

try {
  const start = await send(`${ordersUrl}/`);
  hops.push(start);
  check(
    start.status === 302 && start.location,
    `GET ${ordersUrl}/ answered ${start.status}, not a redirect to sign in`,
  );
  const redirectUri = start.location.searchParams.get('redirect_uri');
  check(
    redirectUri === `${ordersUrl}/signin-oidc`,
    `redirect_uri is ${redirectUri}, expected ${ordersUrl}/signin-oidc (X-Forwarded-Proto/-Host, TRUST_PROXY)`,
  );
  const authOrigin = start.location.origin;
  check(authOrigin.startsWith('https://'), `the authorization endpoint ${authOrigin} is not https (ISSUER)`);
  console.log(`1. ${ordersUrl}/ → ${authOrigin}/authorize, redirect_uri ${redirectUri}`);

  const loginPage = await follow(start.location);
  check(loginPage.status === 200, `the login page answered ${loginPage.status}`);
  const login = postForm(loginPage.body);
  console.log(`2. login page ${loginPage.url.origin}${loginPage.url.pathname}`);

  let page = await send(login.action ? new URL(login.action, loginPage.url) : loginPage.url, {
    method: 'POST',
    form: { ...login.hidden, username, password },
  });
  hops.push(page);
  if (page.status >= 300 && page.status < 400 && page.location) page = await follow(page.location);
  check(page.status === 200, `after the login form: ${page.status} (wrong password?)`);
  const formPost = postForm(page.body);
  check(formPost.action === `${ordersUrl}/signin-oidc`, `the response is posted to ${formPost.action}`);
  console.log(`3. signed in as ${username}; response posted to ${formPost.action}`);

  const callback = await send(formPost.action, { method: 'POST', form: formPost.hidden });
  hops.push(callback);
  check(
    callback.status === 303,
    `POST /signin-oidc answered ${callback.status}: ${callback.body.slice(0, 300)}`,
  );
  const home = await send(`${ordersUrl}/`);
  check(home.status === 200, `GET / with the session cookie answered ${home.status}`);
  console.log(`4. session: ${home.body}`);

  for (const hop of hops) {
    if (hop.rawLocation === undefined || hop.rawLocation.startsWith('/')) continue;
    check(
      [authOrigin, new URL(ordersUrl).origin].includes(hop.location.origin),
      `a redirect left the public origins: ${hop.rawLocation}`,
    );
  }
  for (const cookie of received) {
    check(cookie.attributes.includes('secure'), `cookie ${cookie.name} from ${cookie.host} is not Secure`);
  }
  console.log(`smoke test passed: ${hops.length} redirects on https, ${received.length} cookies, all Secure`);
} catch (error) {
  fail(error instanceof Error ? error.message : String(error));
}
