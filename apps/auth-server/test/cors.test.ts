import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { SPA_ORIGIN } from './helpers/seed.js';

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp());
});
afterAll(() => close());

function preflight(url: string, origin: string) {
  return app.inject({
    method: 'OPTIONS',
    url,
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type',
    },
  });
}

describe('CORS', () => {
  it.each(['/token', '/userinfo', '/revoke'])(
    'allows a public client origin on %s (preflight)',
    async (url) => {
      const response = await preflight(url, SPA_ORIGIN);
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(SPA_ORIGIN);
      expect(String(response.headers['access-control-allow-methods'])).toContain('POST');
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    },
  );

  it('allows the origin on the actual request', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { ...FORM, origin: SPA_ORIGIN },
      payload: form({ grant_type: 'refresh_token', client_id: 'spa', refresh_token: 'unknown' }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['access-control-allow-origin']).toBe(SPA_ORIGIN);
    expect(response.headers.vary).toMatch(/Origin/i);
  });

  it('gives other origins no ACAO header', async () => {
    for (const origin of ['https://evil.example.net', 'https://confidential.example.test', 'null']) {
      const actual = await app.inject({
        method: 'POST',
        url: '/token',
        headers: { ...FORM, origin },
        payload: form({ grant_type: 'client_credentials' }),
      });
      expect(actual.headers['access-control-allow-origin']).toBeUndefined();
      const pre = await preflight('/token', origin);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('is not offered on other endpoints, even to an allowed origin', async () => {
    for (const url of ['/introspect', '/authorize', '/.well-known/openid-configuration']) {
      const pre = await preflight(url, SPA_ORIGIN);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    }
    const introspect = await app.inject({
      method: 'POST',
      url: '/introspect',
      headers: { ...FORM, origin: SPA_ORIGIN },
      payload: 'token=x',
    });
    expect(introspect.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('answers errors of the CORS endpoints with the CORS headers, so the browser client can read them', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/token',
      headers: { 'content-type': 'application/json', origin: SPA_ORIGIN },
      payload: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
    expect(response.headers['access-control-allow-origin']).toBe(SPA_ORIGIN);
    // RFC 9449 §8 nonces and the RFC 6750 challenge are readable by the page.
    expect(String(response.headers['access-control-expose-headers'])).toMatch(/DPoP-Nonce/);
    expect(String(response.headers['access-control-expose-headers'])).toMatch(/WWW-Authenticate/);
  });

  it('marks the CORS endpoints Vary: Origin even for a request without Origin (shared caches)', async () => {
    for (const request of [
      { method: 'POST' as const, url: '/token', headers: FORM, payload: 'grant_type=client_credentials' },
      { method: 'GET' as const, url: '/userinfo' },
      { method: 'POST' as const, url: '/revoke', headers: FORM, payload: 'token=x' },
    ]) {
      const response = await app.inject(request);
      expect(response.headers.vary, request.url).toMatch(/Origin/i);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('runs only on its three endpoints: other routes carry no CORS work or header', async () => {
    for (const url of ['/health/live', '/.well-known/openid-configuration', '/jwks']) {
      const response = await app.inject({ method: 'GET', url, headers: { origin: SPA_ORIGIN } });
      expect(response.headers.vary ?? '', url).not.toMatch(/Origin/i);
    }
  });

  it('refuses a preflight without Access-Control-Request-Method, and gives an unknown origin no allowance', async () => {
    const incomplete = await app.inject({
      method: 'OPTIONS',
      url: '/token',
      headers: { origin: SPA_ORIGIN },
    });
    expect(incomplete.statusCode).toBe(400);
    expect(incomplete.headers['access-control-allow-origin']).toBeUndefined();
    const unknown = await preflight('/userinfo', 'https://evil.example.net');
    expect(unknown.headers['access-control-allow-origin']).toBeUndefined();
    expect(unknown.headers['access-control-allow-methods']).toBeUndefined();
    const allowed = await preflight('/userinfo', SPA_ORIGIN);
    expect(allowed.headers['access-control-allow-headers']).toMatch(/DPoP/);
    expect(allowed.headers['access-control-max-age']).toBe('600');
  });
});
