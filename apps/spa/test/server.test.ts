import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DESIGN_TOKENS_CSS } from '@oidc-orders/service-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, createSpaHandler, type FetchMetadata } from '../src/app.js';
import { DEFAULT_SCOPE, parseSpaConfig, SpaConfigError } from '../src/config.js';

const ISSUER = 'http://localhost:4000';
const METADATA = { issuer: ISSUER, token_endpoint: `${ISSUER}/token` };

describe('parseSpaConfig', () => {
  it('applies the documented defaults', () => {
    expect(parseSpaConfig({})).toEqual({
      port: 5173,
      host: '0.0.0.0',
      issuer: 'http://localhost:4000',
      clientId: 'orders-spa',
      scope: DEFAULT_SCOPE,
      apiUrl: 'http://localhost:3000/orders',
      baseUrl: undefined,
    });
    expect(DEFAULT_SCOPE).toBe('openid profile email orders.read offline_access');
  });

  it.each([
    [{ PORT: 'x' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ SPA_ISSUER: 'localhost:4000' }, 'SPA_ISSUER'],
    [{ SPA_ISSUER: 'http://localhost:4000/' }, 'SPA_ISSUER'],
    [{ SPA_API_URL: '/orders' }, 'SPA_API_URL'],
  ])('refuses %j naming %s', (environment, variable) => {
    expect(() => parseSpaConfig(environment)).toThrow(SpaConfigError);
    expect(() => parseSpaConfig(environment)).toThrow(new RegExp(`^${variable} `));
  });
});

describe('the SPA server', () => {
  let server: Server;
  let base: string;
  let discoveryCalls = 0;
  let discoveryUp = false;
  const fetchMetadata: FetchMetadata = async () => {
    discoveryCalls++;
    if (!discoveryUp) throw new Error('connection refused');
    return METADATA;
  };
  const config = parseSpaConfig({ SPA_ISSUER: ISSUER, SPA_API_URL: 'http://localhost:3000/orders' });

  beforeAll(async () => {
    const handler = createSpaHandler(config, fetchMetadata);
    server = createServer((request, response) => void handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it.each(['/', '/callback', '/callback?code=x&state=y'])(
    'serves the page at %s with a strict CSP',
    async (path) => {
      const response = await fetch(`${base}${path}`);

      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('content-security-policy')).toBe(contentSecurityPolicy(config));
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      const body = await response.text();
      expect(body.match(/<script\b[^>]*>/g)?.every((tag) => / src="/.test(tag))).toBe(true);
      expect(body).not.toMatch(/<style\b|\sstyle=|\son[a-z]+=/i);
    },
  );

  it('allows fetch to itself, the issuer and the API only, and no inline script', () => {
    const csp = contentSecurityPolicy(config);
    expect(csp).toContain("connect-src 'self' http://localhost:4000 http://localhost:3000");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
  });

  it('serves oidc-client-ts from node_modules and the app files', async () => {
    for (const [path, type] of [
      ['/vendor/oidc-client-ts.min.js', 'text/javascript; charset=utf-8'],
      ['/app.js', 'text/javascript; charset=utf-8'],
      ['/app.css', 'text/css; charset=utf-8'],
    ] as const) {
      const response = await fetch(`${base}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type'), path).toBe(type);
    }
    const bundle = await (await fetch(`${base}/vendor/oidc-client-ts.min.js`)).text();
    expect(bundle).toContain('var oidc=');
  });

  it('serves the shared design tokens first, then its own green accent over them', async () => {
    const css = await (await fetch(`${base}/app.css`)).text();
    expect(css.startsWith(DESIGN_TOKENS_CSS)).toBe(true);
    const own = css.slice(DESIGN_TOKENS_CSS.length);
    expect(own).toContain('--accent: #1f7a4d;');
    expect(own).not.toContain('--danger-text:');
  });

  it('keeps the tokens in session storage and renews with the refresh token, not an iframe', async () => {
    const script = await (await fetch(`${base}/app.js`)).text();

    expect(script).toContain('automaticSilentRenew: false');
    expect(script).toContain('new WebStorageStateStore({ store: window.sessionStorage })');
    expect(script).not.toContain('localStorage');
    expect(script).not.toContain('silent_redirect_uri');
  });

  it('answers 503 for /config.json until discovery succeeds, then serves the client settings', async () => {
    const down = await fetch(`${base}/config.json`);
    expect(down.status).toBe(503);

    discoveryUp = true;
    const up = await fetch(`${base}/config.json`);
    expect(up.status).toBe(200);
    expect(await up.json()).toEqual({
      authority: ISSUER,
      client_id: 'orders-spa',
      scope: DEFAULT_SCOPE,
      api_url: 'http://localhost:3000/orders',
      metadata: METADATA,
    });
    const callsAfterSuccess = discoveryCalls;
    await fetch(`${base}/config.json`);
    expect(discoveryCalls).toBe(callsAfterSuccess);
  });

  it('answers 404 for anything else and 405 for other methods', async () => {
    const missing = await fetch(`${base}/src/server.ts`);
    expect(missing.status).toBe(404);
    // A page like the others: the app's stylesheet, one heading, a link back to the app.
    expect(missing.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const page = await missing.text();
    expect(page).toContain('<link rel="stylesheet" href="/app.css">');
    expect(page).toContain('<h1 id="page-title">Page not found</h1>');
    expect(page).toContain('<a class="button primary" href="/">');
    expect((await fetch(`${base}/../package.json`)).status).toBe(404);
    expect((await fetch(`${base}/`, { method: 'POST' })).status).toBe(405);
  });
});

describe('one host name', () => {
  it('with SPA_BASE_URL, a page opened on another host name is redirected there; /health is not', async () => {
    let handler: ReturnType<typeof createSpaHandler> | undefined;
    const server = createServer((request, response) => void handler!(request, response));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const { port } = server.address() as AddressInfo;
    handler = createSpaHandler(
      parseSpaConfig({ SPA_BASE_URL: `http://localhost:${port}` }),
      async () => METADATA,
    );
    try {
      const other = await fetch(`http://127.0.0.1:${port}/callback?x=1`, { redirect: 'manual' });
      expect(other.status).toBe(302);
      expect(other.headers.get('location')).toBe(`http://localhost:${port}/callback?x=1`);
      expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
      const same = await fetch(`http://localhost:${port}/`, { redirect: 'manual' });
      expect(same.status).toBe(200);
    } finally {
      await new Promise((done) => server.close(done));
    }
  });
});
