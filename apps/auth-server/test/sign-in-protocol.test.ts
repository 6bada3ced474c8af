import { createServer } from 'node:net';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchBrowser } from './helpers/fetch-browser.js';
import { startRelyingPartyFlow } from './helpers/relying-party.js';
import { ALICE, CONSENTING, startSignInApp } from './sign-in-fixtures.js';

/**
 * The sign-in flow against a real listener, with openid-client as the relying party: it checks
 * what a strict client checks (RFC 9207 `iss`, `state`, PKCE, the ID token's `nonce`, signature and
 * claims). The pages are driven by `fetch` with a hand-kept cookie jar, as a browser would.
 */

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const hidden = (page: string) =>
  Object.fromEntries(
    [...page.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((match) => [
      match[1],
      match[2],
    ]),
  );

let started: Awaited<ReturnType<typeof startSignInApp>>;
let issuer: string;

beforeAll(async () => {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  started = await startSignInApp({ env: { ISSUER: issuer } });
  await started.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await started?.close();
});

describe('openid-client as the relying party, over a real listener', () => {
  it('signs in through the login and consent pages, gets valid tokens, then logs out', async () => {
    const { config, authorizationUrl, nonce, redeem } = await startRelyingPartyFlow(issuer, CONSENTING, {
      scope: 'openid profile email',
      prompt: 'consent',
    });

    const browser = new FetchBrowser();
    const toLogin = await browser.request(authorizationUrl);
    expect(toLogin.status).toBe(303);
    const loginUrl = new URL(toLogin.headers.get('location')!, issuer);
    const loginPage = await (await browser.request(loginUrl)).text();
    const toConsent = await browser.request(loginUrl, {
      method: 'POST',
      form: { ...hidden(loginPage), username: ALICE.username, password: ALICE.password },
    });
    expect(toConsent.status).toBe(303);
    expect(browser.hasCookie('op_session')).toBe(true);
    const consentUrl = new URL(toConsent.headers.get('location')!, issuer);
    const consentPage = await (await browser.request(consentUrl)).text();
    const callback = await browser.request(consentUrl, {
      method: 'POST',
      form: { ...hidden(consentPage), decision: 'approve' },
    });
    expect(callback.status).toBe(303);

    const tokens = await redeem(new URL(callback.headers.get('location')!));
    const claims = tokens.claims()!;
    expect(claims.sub).toBe(ALICE.sub);
    expect(claims.nonce).toBe(nonce);
    expect(typeof claims.sid).toBe('string');
    expect(typeof claims.auth_time).toBe('number');
    // RFC 8176 §2: a password sign-in says `pwd` (a Kerberos one says `wia`: e2e/test/kerberos.test.ts).
    expect(claims.amr).toEqual(['pwd']);

    const logoutUrl = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: CONSENTING.postLogoutRedirectUri,
      state: 'after-logout',
    });
    const loggedOut = await browser.request(logoutUrl);
    expect(loggedOut.status).toBe(302);
    const target = new URL(loggedOut.headers.get('location')!);
    expect(`${target.origin}${target.pathname}`).toBe(CONSENTING.postLogoutRedirectUri);
    expect(target.searchParams.get('state')).toBe('after-logout');
    expect(browser.hasCookie('op_session')).toBe(false);
  });
});
