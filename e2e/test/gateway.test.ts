/**
 * The gateway as deployed: Debian's nginx runs deploy/nginx/templates/default.conf.template (the
 * file docker-compose.yml mounts) in front of the real authorization server and orders service,
 * and a sign-in is performed by plain HTTP through the gateway only. The apps run as in production
 * (NODE_ENV=production, https issuer, TRUST_PROXY=1), so every public URL they produce must come
 * from the forwarded scheme and host, and their `__Host-` cookies must pass the proxy unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayBrowser, type GatewayResponse, readPostForm } from '../src/gateway-browser.js';
import { type GatewayStack, startGatewayStack } from '../src/gateway-stack.js';

let stack: GatewayStack;

beforeAll(async () => {
  stack = await startGatewayStack();
}, 120_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

/** Every redirect must stay on the gateway's https origins: never an app's own address or http. */
function expectPublicRedirects(responses: GatewayResponse[]) {
  const origins = [stack.authUrl, stack.ordersUrl];
  for (const response of responses) {
    const raw = response.headers.location;
    if (raw === undefined) continue;
    if (!raw.startsWith('/')) expect(origins, `Location ${raw}`).toContain(new URL(raw).origin);
  }
}

describe('gateway (nginx) in front of both apps', () => {
  it('signs in through the gateway: forwarded scheme and host in the redirect URIs, cookies through the proxy', async () => {
    const browser = new GatewayBrowser(stack.ca);
    const responses: GatewayResponse[] = [];

    // 1. A protected page of the orders app sends the browser to the provider on its public host.
    const start = await browser.request(`${stack.ordersUrl}/`);
    responses.push(start);
    expect(start.status, stack.logs()).toBe(302);
    const authorizationUrl = start.location()!;
    expect(`${authorizationUrl.origin}${authorizationUrl.pathname}`).toBe(`${stack.authUrl}/authorize`);
    expect(authorizationUrl.searchParams.get('redirect_uri')).toBe(`${stack.ordersUrl}/signin-oidc`);
    expect(authorizationUrl.searchParams.get('response_mode')).toBe('form_post');

    // 2. The provider's login page, reached through its redirects.
    const toLogin = await browser.follow(authorizationUrl);
    responses.push(...toLogin);
    const loginPage = toLogin.at(-1)!;
    expect(loginPage.status).toBe(200);
    expect(loginPage.url.origin).toBe(stack.authUrl);
    const login = readPostForm(loginPage.body);
    expect(login.inputs).toEqual(expect.arrayContaining(['username', 'password']));

    // 3. The login form goes back with its hidden fields and the provider's cookies.
    const posted = await browser.request(
      login.action ? new URL(login.action, loginPage.url) : loginPage.url,
      {
        method: 'POST',
        form: { ...login.hidden, username: stack.user.username, password: stack.user.password },
      },
    );
    responses.push(posted);
    const toFormPost = posted.location() ? await browser.follow(posted.location()!) : [];
    responses.push(...toFormPost);
    const formPostPage = toFormPost.at(-1) ?? posted;
    expect(formPostPage.status, formPostPage.body).toBe(200);

    // 4. The form_post response goes to the redirect URI built from the forwarded headers.
    const formPost = readPostForm(formPostPage.body);
    expect(formPost.action).toBe(`${stack.ordersUrl}/signin-oidc`);
    expect(Object.keys(formPost.hidden)).toEqual(expect.arrayContaining(['code', 'state']));
    const callback = await browser.request(formPost.action!, { method: 'POST', form: formPost.hidden });
    responses.push(callback);
    expect(callback.status, stack.logs()).toBe(303);
    expect(callback.location()?.href).toBe(`${stack.ordersUrl}/`);

    // 5. The session cookie set through the proxy is sent back through it.
    const session = browser.received.find((c) => c.name === '__Host-orders-session');
    expect(session?.host).toBe('localhost');
    const home = await browser.request(`${stack.ordersUrl}/`);
    responses.push(home);
    expect(home.status).toBe(200);
    expect(JSON.parse(home.body)).toMatchObject({
      name: stack.user.name,
      sub: stack.user.sub,
      hasAccessToken: true,
    });
    expect(browser.sent).toContain('localhost: __Host-orders-session');

    // Every redirect stayed on the public https origins.
    expectPublicRedirects(responses);
    // Every cookie, of either app, arrived Secure (they are __Host- cookies: https only, Path=/, no
    // Domain), each on its own host.
    expect(browser.received.length).toBeGreaterThanOrEqual(3);
    for (const cookie of browser.received) {
      expect(cookie.name, cookie.raw).toMatch(/^__Host-/);
      expect(
        cookie.attributes.map((a) => a.toLowerCase()),
        cookie.raw,
      ).toEqual(expect.arrayContaining(['secure', 'httponly', 'path=/']));
      expect(cookie.raw.toLowerCase()).not.toContain('domain=');
    }
    expect(browser.cookieNames('127.0.0.1').some((name) => name.startsWith('__Host-op_'))).toBe(true);
    expect(browser.cookieNames('localhost')).toContain('__Host-orders-session');

    // 6. Logout: the post-logout redirect URI also comes from the forwarded headers. The provider
    // sends the browser back there: the orders page that says the user is signed out.
    const logout = await browser.request(`${stack.ordersUrl}/logout`);
    expect(logout.status).toBe(302);
    const endSession = logout.location()!;
    expect(endSession.origin).toBe(stack.authUrl);
    expect(endSession.searchParams.get('post_logout_redirect_uri')).toBe(`${stack.ordersUrl}/signed-out`);
    const back = await browser.follow(endSession);
    expectPublicRedirects([logout, ...back]);
    const last = back.at(-1)!;
    expect(last.url.href).toBe(`${stack.ordersUrl}/signed-out`);
    expect(last.status).toBe(200);
    expect(last.body).toContain('data-signed-out="true"');
  }, 60_000);

  it('replaces forwarded headers a client sends with its own', async () => {
    const browser = new GatewayBrowser(stack.ca);
    const start = await browser.request(`${stack.ordersUrl}/`, {
      headers: {
        'x-forwarded-host': 'evil.example',
        'x-forwarded-proto': 'http',
        forwarded: 'host=evil.example;proto=http',
      },
    });
    expect(start.status).toBe(302);
    expect(start.location()!.searchParams.get('redirect_uri')).toBe(`${stack.ordersUrl}/signin-oidc`);
  });

  it('publishes discovery with the https issuer and passes its request id to the auth server', async () => {
    const browser = new GatewayBrowser(stack.ca);
    const discovery = await browser.request(`${stack.authUrl}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const metadata = JSON.parse(discovery.body) as Record<string, unknown>;
    expect(metadata.issuer).toBe(stack.authUrl);
    for (const key of ['authorization_endpoint', 'token_endpoint', 'jwks_uri', 'end_session_endpoint']) {
      expect(String(metadata[key])).toMatch(new RegExp(`^${stack.authUrl.replace(/[.]/g, '\\.')}/`));
    }
    expect(discovery.headers['strict-transport-security']).toBe('max-age=31536000');
    // nginx's $request_id (32 hex digits), honoured because the auth server trusts one proxy.
    expect(discovery.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
  });

  it('redirects plain HTTP to HTTPS on the same host and path', async () => {
    const browser = new GatewayBrowser(stack.ca);
    const response = await browser.request(`${stack.ordersHttpUrl}/orders/42?x=1`);
    expect(response.status).toBe(308);
    expect(response.headers.location).toBe(`${stack.ordersUrl}/orders/42?x=1`);
  });

  it('answers 421 for a host that is neither site', async () => {
    const browser = new GatewayBrowser(stack.ca);
    const response = await browser.request(`${stack.ordersUrl}/`, { headers: { host: 'other.example' } });
    expect(response.status).toBe(421);
  });
});
