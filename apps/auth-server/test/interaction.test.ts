import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmLogout, hiddenFields, locationOf, TestBrowser } from './browser.js';
import { basicAuthorization, FORM, TEST_ISSUER } from './helpers/app.js';
import { TEST_SECRETS, WEB_REDIRECT_URI } from './helpers/seed.js';
import { ALICE, authorizePath, BOB, CONSENTING, pkcePair, startSignInApp } from './sign-in-fixtures.js';

let started: Awaited<ReturnType<typeof startSignInApp>>;
beforeAll(async () => {
  started = await startSignInApp();
});
afterAll(async () => {
  await started?.close();
});

const SESSION_COOKIE = '__Host-op_session';
const BROWSER_COOKIE = '__Host-op_browser';

function consentingRequest(overrides: Record<string, string> = {}) {
  const pkce = pkcePair();
  const params = {
    response_type: 'code',
    client_id: CONSENTING.clientId,
    redirect_uri: CONSENTING.redirectUri,
    scope: 'openid profile email',
    state: 'state-abc',
    nonce: 'nonce-abc',
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  return { params, verifier: pkce.verifier };
}

function webRequest(overrides: Record<string, string> = {}) {
  return consentingRequest({ client_id: 'web', redirect_uri: WEB_REDIRECT_URI, ...overrides });
}

/** Posts the login form of the page the browser is on, with every hidden field. */
async function submitLogin(
  browser: TestBrowser,
  page: string,
  username: string = ALICE.username,
  password: string = ALICE.password,
) {
  return browser.post(browser.lastUrl, { ...hiddenFields(page), username, password });
}

async function submitConsent(browser: TestBrowser, page: string, decision: 'approve' | 'deny') {
  return browser.post(browser.lastUrl, { ...hiddenFields(page), decision });
}

function expectLoginPage(response: { statusCode: number; body: string }) {
  expect(response.statusCode).toBe(200);
  expect(response.body).toContain('name="password"');
}

async function redeem(
  code: string,
  verifier: string,
  client: { id: string; secret: string } = { id: CONSENTING.clientId, secret: CONSENTING.secret },
  redirectUri: string = CONSENTING.redirectUri,
) {
  const response = await started.app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization(client.id, client.secret) },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
    }).toString(),
  });
  expect(response.statusCode).toBe(200);
  return response.json() as { id_token: string; access_token: string };
}

describe('full flow by plain HTTP: authorize → login → consent → code → token', () => {
  it('issues a code with state and iss, whose ID token carries nonce, sid and auth_time', async () => {
    const browser = new TestBrowser(started.app);
    const { params, verifier } = consentingRequest();

    const start = await browser.get(authorizePath(params));
    expect(start.statusCode).toBe(303);
    expect(locationOf(start).pathname).toMatch(/^\/interaction\/[\w-]+\/login$/);
    expect(browser.cookies.has(BROWSER_COOKIE)).toBe(true);

    const loginPage = await browser.follow(start);
    expectLoginPage(loginPage);
    expect(loginPage.body).toContain('Consenting &lt;App&gt;');

    const afterLogin = await submitLogin(browser, loginPage.body);
    expect(afterLogin.statusCode).toBe(303);
    expect(locationOf(afterLogin).pathname).toMatch(/\/consent$/);
    const sessionCookie = afterLogin.cookies.find((cookie) => cookie.name === SESSION_COOKIE);
    expect(sessionCookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/', secure: true });

    const consentPage = await browser.follow(afterLogin);
    expect(consentPage.statusCode).toBe(200);
    expect(consentPage.body).toContain('name="decision" value="approve"');
    expect(consentPage.body).toContain('name="decision" value="deny"');
    expect(consentPage.body).toContain('See your email address');

    const callback = await submitConsent(browser, consentPage.body, 'approve');
    expect([302, 303]).toContain(callback.statusCode);
    const location = locationOf(callback);
    expect(`${location.origin}${location.pathname}`).toBe(CONSENTING.redirectUri);
    expect(location.searchParams.get('state')).toBe('state-abc');
    expect(location.searchParams.get('iss')).toBe(TEST_ISSUER);
    const code = location.searchParams.get('code');
    expect(code).toBeTruthy();

    const tokens = await redeem(code!, verifier);
    const idToken = decodeJwt(tokens.id_token);
    expect(idToken.sub).toBe(ALICE.sub);
    expect(idToken.nonce).toBe('nonce-abc');
    expect(typeof idToken.sid).toBe('string');
    expect(typeof idToken.auth_time).toBe('number');

    // Consent is remembered: the same request again goes straight back with a code.
    const again = await browser.get(authorizePath(consentingRequest().params));
    expect(again.statusCode).toBe(302);
    expect(locationOf(again).searchParams.get('code')).toBeTruthy();
    // …and carries the same session.
    const secondCode = locationOf(again).searchParams.get('code')!;
    expect(secondCode).not.toBe(code);
  });

  it('deny → access_denied with state and iss, no code', async () => {
    const browser = new TestBrowser(started.app);
    const loginPage = await browser.follow(
      await browser.get(authorizePath(consentingRequest({ scope: 'openid orders.read' }).params)),
    );
    const consentPage = await browser.follow(await submitLogin(browser, loginPage.body));
    const callback = await submitConsent(browser, consentPage.body, 'deny');
    const location = locationOf(callback);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('state-abc');
    expect(location.searchParams.get('iss')).toBe(TEST_ISSUER);
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('granted scopes are limited by the user record (bob may have openid and profile only)', async () => {
    const browser = new TestBrowser(started.app);
    const loginPage = await browser.follow(await browser.get(authorizePath(consentingRequest().params)));
    const consentPage = await browser.follow(
      await submitLogin(browser, loginPage.body, BOB.username, BOB.password),
    );
    expect(consentPage.body).toContain('See your name');
    expect(consentPage.body).not.toContain('See your email address');
  });
});

describe('single sign-on', () => {
  it('a second client skips login (and consent for a skip_consent client); the ID tokens share the sid', async () => {
    const browser = new TestBrowser(started.app);
    const first = consentingRequest({ prompt: 'consent' });
    const loginPage = await browser.follow(await browser.get(authorizePath(first.params)));
    const consentPage = await browser.follow(await submitLogin(browser, loginPage.body));
    const firstCode = locationOf(await submitConsent(browser, consentPage.body, 'approve')).searchParams.get(
      'code',
    )!;

    const second = webRequest();
    const response = await browser.get(authorizePath(second.params));
    expect(response.statusCode).toBe(302);
    const location = locationOf(response);
    expect(`${location.origin}${location.pathname}`).toBe(WEB_REDIRECT_URI);
    const secondCode = location.searchParams.get('code')!;

    const firstToken = decodeJwt((await redeem(firstCode, first.verifier)).id_token);
    const secondToken = decodeJwt(
      (await redeem(secondCode, second.verifier, { id: 'web', secret: TEST_SECRETS.web }, WEB_REDIRECT_URI))
        .id_token,
    );
    expect(secondToken.sid).toBe(firstToken.sid);
    expect(secondToken.auth_time).toBe(firstToken.auth_time);
  });

  it('prompt=login shows the login page despite the session, then completes', async () => {
    const browser = new TestBrowser(started.app);
    const loginPage = await browser.follow(await browser.get(authorizePath(webRequest().params)));
    await submitLogin(browser, loginPage.body);

    const forced = await browser.follow(
      await browser.get(authorizePath(webRequest({ prompt: 'login' }).params)),
    );
    expectLoginPage(forced);
    const done = await submitLogin(browser, forced.body);
    expect(locationOf(done).searchParams.get('code')).toBeTruthy();
  });

  it('max_age=0 forces the login page, then completes', async () => {
    const browser = new TestBrowser(started.app);
    const loginPage = await browser.follow(await browser.get(authorizePath(webRequest().params)));
    await submitLogin(browser, loginPage.body);

    const forced = await browser.follow(
      await browser.get(authorizePath(webRequest({ max_age: '0' }).params)),
    );
    expectLoginPage(forced);
    const done = await submitLogin(browser, forced.body);
    expect(locationOf(done).searchParams.get('code')).toBeTruthy();
  });

  it('works across two server instances sharing the database', async () => {
    const other = await startSignInApp({ database: started.database });
    try {
      const browserOnFirst = new TestBrowser(started.app);
      const loginPage = await browserOnFirst.follow(
        await browserOnFirst.get(authorizePath(webRequest().params)),
      );
      // The same browser (cookies) now reaches the other instance.
      const browserOnSecond = new TestBrowser(other.app);
      for (const [name, value] of browserOnFirst.cookies) browserOnSecond.cookies.set(name, value);
      browserOnSecond.lastUrl = browserOnFirst.lastUrl;
      const done = await submitLogin(browserOnSecond, loginPage.body);
      expect(locationOf(done).searchParams.get('code')).toBeTruthy();
    } finally {
      await other.app.close();
    }
  });
});

describe('login failures and CSRF', () => {
  it('a wrong password and an unknown user get the same generic message, and no session cookie', async () => {
    const bodies: string[] = [];
    for (const [username, password] of [
      [ALICE.username, 'wrong-password'],
      ['nobody-here', 'whatever'],
    ] as const) {
      const browser = new TestBrowser(started.app);
      const loginPage = await browser.follow(await browser.get(authorizePath(webRequest().params)));
      const response = await submitLogin(browser, loginPage.body, username, password);
      expect(response.statusCode).toBe(401);
      expect(response.body).toContain('Invalid username or password');
      expect(response.cookies.find((cookie) => cookie.name === SESSION_COOKIE)).toBeUndefined();
      expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
      // The page comes back with a fresh form that still works.
      const retry = await submitLogin(browser, response.body);
      expect(locationOf(retry).searchParams.get('code')).toBeTruthy();
      bodies.push(
        response.body
          .replace(/(value|data-passkey-csrf|data-passkey-options)="[^"]*"/g, '')
          .replace(/\/interaction\/[^/]+\//g, '/interaction/ID/'),
      );
    }
    // Apart from the echoed username, the CSRF tokens, the passkey challenge and the interaction's
    // links, the two answers are identical.
    expect(bodies[0]).toBe(bodies[1]);
  });

  it('a login post without the CSRF field → 403, no session', async () => {
    const browser = new TestBrowser(started.app);
    await browser.follow(await browser.get(authorizePath(webRequest().params)));
    const response = await browser.post(browser.lastUrl, {
      username: ALICE.username,
      password: ALICE.password,
    });
    expect(response.statusCode).toBe(403);
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
  });

  it('a consent post with a wrong CSRF token → 403', async () => {
    const browser = new TestBrowser(started.app);
    // prompt=consent: the consent page even when an earlier test left the consent remembered.
    const request = consentingRequest({ prompt: 'consent' });
    const loginPage = await browser.follow(await browser.get(authorizePath(request.params)));
    const consentPage = await browser.follow(await submitLogin(browser, loginPage.body));
    expect(consentPage.statusCode).toBe(200);
    const response = await browser.post(browser.lastUrl, { csrf: 'forged', decision: 'approve' });
    expect(response.statusCode).toBe(403);
    // The login page's token does not work on the consent form either.
    const loginToken = hiddenFields(loginPage.body).csrf!;
    const reused = await browser.post(browser.lastUrl, { csrf: loginToken, decision: 'approve' });
    expect(reused.statusCode).toBe(403);
  });

  it('another browser cannot complete the interaction, even with the page and its hidden fields', async () => {
    const victim = new TestBrowser(started.app);
    const loginPage = await victim.follow(await victim.get(authorizePath(webRequest().params)));
    const attacker = new TestBrowser(started.app);
    const response = await attacker.post(victim.lastUrl, {
      ...hiddenFields(loginPage.body),
      username: ALICE.username,
      password: ALICE.password,
    });
    expect(response.statusCode).toBe(403);
    expect(response.headers.location).toBeUndefined();
  });

  it('an interaction completes once: a second submission goes on to the client, without a second code', async () => {
    const browser = new TestBrowser(started.app);
    const loginPage = await browser.follow(await browser.get(authorizePath(webRequest().params)));
    const first = await submitLogin(browser, loginPage.body);
    expect(locationOf(first).searchParams.get('code')).toBeTruthy();
    const second = await submitLogin(browser, loginPage.body);
    // The browser is signed in: it is sent on to the client's registered home, with no code.
    expect(second.statusCode).toBe(303);
    expect(second.headers.location).toBe('https://web.example.test/');
    // A browser without the session gets the expired page instead, still with that way on.
    const stranger = new TestBrowser(started.app);
    const expired = await stranger.post(browser.lastUrl, {});
    expect(expired.statusCode).toBe(400);
    expect(expired.body).toContain('href="https://web.example.test/"');
  });
});

describe('logout (RP-Initiated Logout)', () => {
  /** A browser signed in through the pages, and the code it obtained for the consenting client. */
  async function signedIn() {
    const browser = new TestBrowser(started.app);
    const request = consentingRequest({ prompt: 'consent' });
    const loginPage = await browser.follow(await browser.get(authorizePath(request.params)));
    const consentPage = await browser.follow(await submitLogin(browser, loginPage.body));
    const code = locationOf(await submitConsent(browser, consentPage.body, 'approve')).searchParams.get(
      'code',
    )!;
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);
    return { browser, code, verifier: request.verifier };
  }

  async function expectSessionEnded(browser: TestBrowser) {
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
    const next = await browser.get(authorizePath(webRequest().params));
    expect(locationOf(next).pathname).toMatch(/\/login$/);
  }

  it('a registered post_logout_redirect_uri (with client_id) → redirect there with state; session ended', async () => {
    const { browser } = await signedIn();
    const response = await confirmLogout(
      browser,
      await browser.get(
        `/logout?${new URLSearchParams({ client_id: CONSENTING.clientId, post_logout_redirect_uri: CONSENTING.postLogoutRedirectUri, state: 'bye' })}`,
      ),
    );
    expect(response.statusCode).toBe(303);
    const location = locationOf(response);
    expect(`${location.origin}${location.pathname}`).toBe(CONSENTING.postLogoutRedirectUri);
    expect(location.searchParams.get('state')).toBe('bye');
    await expectSessionEnded(browser);
  });

  it('with id_token_hint naming the client → redirect; a forged hint → 400 and the session stays', async () => {
    const { browser, code, verifier } = await signedIn();
    const idToken = (await redeem(code, verifier)).id_token;
    const [header, payload] = idToken.split('.');
    const forged = await browser.get(
      `/logout?${new URLSearchParams({ id_token_hint: `${header}.${payload}.AAAA`, post_logout_redirect_uri: CONSENTING.postLogoutRedirectUri })}`,
    );
    expect(forged.statusCode).toBe(400);
    expect(forged.headers.location).toBeUndefined();
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);

    const response = await browser.get(
      `/logout?${new URLSearchParams({ id_token_hint: idToken, post_logout_redirect_uri: CONSENTING.postLogoutRedirectUri, state: 's' })}`,
    );
    expect(response.statusCode).toBe(302);
    expect(locationOf(response).searchParams.get('state')).toBe('s');
    await expectSessionEnded(browser);
  });

  it('an unregistered post_logout_redirect_uri → error page (400), no redirect; session kept (§3)', async () => {
    const { browser } = await signedIn();
    const response = await browser.get(
      `/logout?${new URLSearchParams({ client_id: CONSENTING.clientId, post_logout_redirect_uri: 'https://evil.example.test/', state: 'x' })}`,
    );
    expect(response.statusCode).toBe(400);
    expect(response.headers.location).toBeUndefined();
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);
    const next = await browser.get(authorizePath(webRequest().params));
    expect(locationOf(next).pathname).not.toMatch(/\/login$/);
  });

  it('POST /logout works too', async () => {
    const { browser } = await signedIn();
    const response = await confirmLogout(browser, await browser.post('/logout', {}));
    expect(response.statusCode).toBe(200);
    await expectSessionEnded(browser);
  });

  it("without id_token_hint it asks first (§2): a link, or a post without the page's CSRF token, signs nobody out", async () => {
    const { browser } = await signedIn();
    const asked = await browser.get(`/logout?${new URLSearchParams({ client_id: CONSENTING.clientId })}`);
    expect(asked.statusCode).toBe(200);
    expect(asked.body).toContain('asks you to sign out');
    expect(asked.headers['cache-control']).toBe('no-store');
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);

    const { csrf, ...fields } = hiddenFields(asked.body);
    expect(csrf).toBeTruthy();
    for (const forged of [
      { ...fields, confirm: 'yes' },
      { ...fields, confirm: 'yes', csrf: `${csrf}x` },
      { ...fields, csrf: csrf! },
    ]) {
      const again = await browser.post('/logout', forged);
      expect(again.statusCode).toBe(200);
      expect(again.body).toContain('name="confirm" value="yes"');
      expect(browser.cookies.has(SESSION_COOKIE)).toBe(true);
    }
    // The token of one browser does not work in another browser of the same user.
    const other = await signedIn();
    const stolen = await other.browser.post('/logout', { ...fields, confirm: 'yes', csrf: csrf! });
    expect(stolen.body).toContain('name="confirm" value="yes"');
    expect(other.browser.cookies.has(SESSION_COOKIE)).toBe(true);

    expect((await confirmLogout(browser, asked)).body).toContain('You have been signed out');
    await expectSessionEnded(browser);
  });

  it('an id_token_hint of another session asks too; one of this session signs out at once', async () => {
    const first = await signedIn();
    const idTokenOfFirst = (await redeem(first.code, first.verifier)).id_token;
    const second = await signedIn();
    const asked = await second.browser.get(
      `/logout?${new URLSearchParams({ id_token_hint: idTokenOfFirst })}`,
    );
    expect(asked.body).toContain('name="confirm" value="yes"');
    expect(second.browser.cookies.has(SESSION_COOKIE)).toBe(true);

    const own = await first.browser.get(`/logout?${new URLSearchParams({ id_token_hint: idTokenOfFirst })}`);
    expect(own.body).toContain('You have been signed out');
    await expectSessionEnded(first.browser);
  });
});

describe('interaction expiry', () => {
  it('an interaction older than 10 minutes shows an error page instead of the login form', async () => {
    const clock = createTestClock(Math.floor(Date.now() / 1000));
    const clocked = await startSignInApp({ clock });
    try {
      const browser = new TestBrowser(clocked.app);
      const start = await browser.get(authorizePath(webRequest({ login_hint: 'alice' }).params));
      const loginPage = await browser.follow(start);
      expectLoginPage(loginPage);
      // OIDC Core §3.1.2.1 login_hint pre-fills the username.
      expect(loginPage.body).toContain('value="alice"');

      clock.advance(601);
      const expired = await browser.get(browser.lastUrl);
      expect(expired.statusCode).toBe(400);
      expect(expired.body).not.toContain('name="password"');
      const posted = await submitLogin(browser, loginPage.body);
      expect(posted.statusCode).toBe(400);
      expect(browser.cookies.has(SESSION_COOKIE)).toBe(false);
    } finally {
      await clocked.close();
    }
  });
});
