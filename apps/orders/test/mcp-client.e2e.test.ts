import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { findFreePort } from '@oidc-orders/service-kit/testing';
import type { FastifyInstance } from 'fastify';
import * as oidc from 'openid-client';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp } from './helpers/app.js';
import { type AuthServerProcess, startAuthServer } from './helpers/auth-server.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';

/**
 * Real clients against the real servers: the official MCP SDK's client (StreamableHTTPClientTransport
 * with its OAuth provider) discovers everything from the orders service's 401, registers by RFC 7591
 * or names a Client ID Metadata Document served from a loopback listener, signs in through the auth
 * server's real login and consent pages (plain HTTP, a small cookie jar), and calls both tools;
 * openid-client registers by RFC 7591 and signs in with the client it got. One variant signs in
 * in a real Chromium (Debian's chromium, or CHROMIUM_PATH).
 */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const PASSWORD = 'mcp-user-password-for-tests';
const REDIRECT_URI = 'http://127.0.0.1:7788/callback';
let auth: AuthServerProcess;
let database: TestDatabase;
let orders: FastifyInstance;
let ordersUrl: string;
let documentServer: Server;
let documentOrigin: string;

beforeAll(async () => {
  documentServer = createServer((request, response) => {
    if (request.url !== '/mcp-agent.json') return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        client_id: `${documentOrigin}/mcp-agent.json`,
        client_name: 'Document Agent',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      }),
    );
  });
  await new Promise<void>((resolve) => documentServer.listen(0, '127.0.0.1', resolve));
  documentOrigin = `http://127.0.0.1:${(documentServer.address() as AddressInfo).port}`;
  const port = await findFreePort();
  ordersUrl = `http://127.0.0.1:${port}`;
  const resource = `${ordersUrl}/`;
  const capped = 'openid email orders.read orders.write';
  auth = await startAuthServer({
    clients: [
      {
        client_id: 'orders-web',
        client_secret: 'orders-web-secret-for-mcp-tests',
        redirect_uris: [`${ordersUrl}/signin-oidc`],
      },
    ],
    resources: [{ id: resource, scopes: ['orders.read', 'orders.write'], claims: ['email'] }],
    users: [{ sub: 'u-mcp', username: 'mcp-user', password: PASSWORD, email: 'mcp@example.test' }],
    client_registration: { open: true, scope: capped },
    client_id_metadata_documents: { allowed_origins: [documentOrigin], scope: capped },
  });
  database = await createTestDatabase();
  orders = await buildTestApp(database, {
    environment: {
      OIDC_ISSUER: auth.issuer,
      OIDC_CLIENT_ID: 'orders-web',
      OIDC_CLIENT_SECRET: 'orders-web-secret-for-mcp-tests',
      SESSION_SECRET: 'mcp-client-test-session-secret-0123456789',
      RESOURCE_ID: resource,
      BASE_URL: ordersUrl,
    },
  });
  await orders.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await orders?.close();
  await database?.dispose();
  await auth?.stop();
  await new Promise((resolve) => documentServer?.close(resolve));
});

/**
 * The user at the auth server's pages, over plain HTTP: follows redirects, keeps cookies, posts
 * forms; answers the redirect back to the client (code, state, iss).
 */
async function approveAsUser(authorizationUrl: URL): Promise<URL> {
  const cookies = new Map<string, string>();
  const send = async (url: string, body?: Record<string, string>) => {
    const response = await fetch(url, {
      method: body ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body ? { body: new URLSearchParams(body).toString() } : {}),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...value] = (pair ?? '').split('=');
      cookies.set(name!.trim(), value.join('='));
    }
    return response;
  };
  let url = authorizationUrl.href;
  for (let step = 0; step < 12; step++) {
    const response = await send(url);
    const location = response.headers.get('location');
    if (location !== null) {
      const next = new URL(location, url);
      if (next.href.startsWith(REDIRECT_URI)) return next;
      url = next.href;
      continue;
    }
    const page = await response.text();
    const fields = Object.fromEntries(
      [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [
        m[1]!,
        decode(m[2]!),
      ]),
    );
    const answer = page.includes('name="password"')
      ? { ...fields, username: 'mcp-user', password: PASSWORD }
      : page.includes('name="decision"')
        ? { ...fields, decision: 'approve' }
        : undefined;
    if (answer === undefined) throw new Error(`unexpected page at ${url}: ${page.slice(0, 300)}`);
    const posted = await send(url, answer);
    const next = new URL(posted.headers.get('location') ?? url, url);
    if (next.href.startsWith(REDIRECT_URI)) return next;
    url = next.href;
  }
  throw new Error('the sign-in did not end at the redirect URI');
}

const decode = (value: string) =>
  value
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<');

function codeOf(redirect: URL): string {
  const code = redirect.searchParams.get('code');
  if (code === null) throw new Error(`no code in ${redirect.href}`);
  return code;
}

/** An OAuth provider for the SDK that keeps everything in memory and hands the sign-in to `approveAsUser`. */
class TestProvider implements OAuthClientProvider {
  information: OAuthClientInformationMixed | undefined;
  stored: OAuthTokens | undefined;
  verifier = '';
  pendingAuthorization: URL | undefined;
  constructor(presetClientId?: string) {
    if (presetClientId !== undefined) this.information = { client_id: presetClientId };
  }
  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'SDK Agent',
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.information;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.pendingAuthorization = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** connect → 401 → discovery, registration, sign-in → finishAuth → connect again, as an MCP host does. */
async function connectedClient(provider: TestProvider): Promise<Client> {
  const endpoint = new URL(`${ordersUrl}/mcp`);
  const first = new Client({ name: 'test-host', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  await transport.finishAuth(codeOf(await approveAsUser(provider.pendingAuthorization!)));
  const client = new Client({ name: 'test-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
  return client;
}

async function useBothTools(client: Client) {
  const placed = await client.callTool({ name: 'place_order', arguments: { quantity: 2 } });
  const listed = await client.callTool({ name: 'list_orders', arguments: {} });
  return {
    placed: (placed.structuredContent as { order: { id: number; email: string } }).order,
    listed: (listed.structuredContent as { orders: { id: number }[] }).orders,
  };
}

describe('the MCP SDK client', () => {
  it('discovers from a 401, registers by RFC 7591, signs in, and calls both tools for its user', async () => {
    const provider = new TestProvider();

    const client = await connectedClient(provider);
    const tools = await client.listTools();
    const { placed, listed } = await useBothTools(client);
    await client.close();

    expect(provider.information?.client_id).toMatch(/^dyn_/);
    expect(tools.tools.map((tool) => tool.name).sort()).toEqual(['list_orders', 'place_order']);
    expect(placed.email).toBe('mcp@example.test');
    expect(listed.map((order) => order.id)).toContain(placed.id);
  });

  it('uses a Client ID Metadata Document URL as its client_id (served from a loopback listener)', async () => {
    // The SDK names a document only when it is https; a loopback listener is plain http, so the URL
    // is given to it as its client id, which the auth server then fetches.
    const provider = new TestProvider(`${documentOrigin}/mcp-agent.json`);

    const client = await connectedClient(provider);
    const { placed, listed } = await useBothTools(client);
    await client.close();

    expect(placed.email).toBe('mcp@example.test');
    expect(listed.map((order) => order.id)).toContain(placed.id);
  });
});

/** The user in a real Chromium: the login and consent pages clicked through; the redirect caught. */
async function approveInChromium(browser: Browser, authorizationUrl: URL): Promise<URL> {
  const page = await browser.newPage();
  try {
    let redirected: URL | undefined;
    await page.route(`${REDIRECT_URI}**`, async (route) => {
      redirected = new URL(route.request().url());
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'done' });
    });
    await page.goto(authorizationUrl.href);
    await page.fill('input[name="username"]', 'mcp-user');
    await page.fill('input[name="password"]', PASSWORD);
    await page.click('button[type="submit"]');
    await page.click('button[name="decision"][value="approve"]');
    await page.waitForURL(`${REDIRECT_URI}**`);
    if (redirected === undefined) throw new Error('the sign-in did not end at the redirect URI');
    return redirected;
  } finally {
    await page.close();
  }
}

describe('the MCP SDK client, signing in in Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    if (!existsSync(CHROMIUM_PATH))
      throw new Error('install chromium (apt-get install chromium) or set CHROMIUM_PATH');
    browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('registers by RFC 7591, signs in on the real pages and calls both tools', async () => {
    const provider = new TestProvider();
    const endpoint = new URL(`${ordersUrl}/mcp`);
    const transport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
    await expect(
      new Client({ name: 'test-host', version: '1.0.0' }).connect(transport),
    ).rejects.toBeInstanceOf(UnauthorizedError);

    await transport.finishAuth(codeOf(await approveInChromium(browser, provider.pendingAuthorization!)));
    const client = new Client({ name: 'test-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
    const { placed, listed } = await useBothTools(client);
    await client.close();

    expect(placed.email).toBe('mcp@example.test');
    expect(listed.map((order) => order.id)).toContain(placed.id);
  });
});

describe('openid-client', () => {
  it('registers by RFC 7591 (dynamicClientRegistration) and signs in with the client it got', async () => {
    const config = await oidc.dynamicClientRegistration(
      new URL(auth.issuer),
      {
        client_name: 'openid-client agent',
        redirect_uris: [REDIRECT_URI],
        // openid-client authenticates a registered client with client_secret_post unless told otherwise.
        token_endpoint_auth_method: 'client_secret_post',
        scope: 'openid email orders.read',
      },
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const authorizationUrl = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid email orders.read',
      resource: `${ordersUrl}/`,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });

    const redirect = await approveAsUser(authorizationUrl);
    const tokens = await oidc.authorizationCodeGrant(config, redirect, {
      pkceCodeVerifier: verifier,
    });
    const orderList = await fetch(`${ordersUrl}/orders`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });

    expect(config.clientMetadata().client_id).toMatch(/^dyn_/);
    expect(config.clientMetadata().client_secret).toEqual(expect.any(String));
    expect(tokens.claims()?.sub).toBe('u-mcp');
    expect(orderList.status).toBe(200);
  });
});
