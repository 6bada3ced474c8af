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
});
