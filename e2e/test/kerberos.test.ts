/**
 * Kerberos single sign-on (SPNEGO, RFC 4559) against a real MIT Kerberos KDC in a throw-away
 * realm (the service kit's testing/kerberos-realm.ts): `kinit`, then the browser step done by curl `--negotiate`, the
 * code redeemed at the token endpoint and the ID token's `amr` read. Left out (with a line saying
 * what to install) where the MIT programs, curl or the optional `kerberos` binding are missing;
 * never under CI (e2e/system-requirements.ts). The Chromium flows are in kerberos-browser.test.ts.
 */

import { REALM } from '@oidc-orders/service-kit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postForm } from '../src/instances.js';
import {
  CurlBrowser,
  captureNegotiateToken,
  csrfOf,
  DEVICE_GRANT,
  header,
  jwtPayload,
  KERBEROS_ACR,
  KERBEROS_AMR,
  type KerberosScenario,
  kerberosLinkOf,
  REDIRECT_URI,
  startKerberosScenario,
} from '../src/kerberos-flows.js';

let scenario: KerberosScenario;
/** dave's ticket lives one minute: a token made at the start is presented after it expired. */
let daveToken: string;
let daveCache: string;
let daveTicketAt: number;

beforeAll(async () => {
  scenario = await startKerberosScenario();
  daveCache = scenario.realm.kinit(scenario.dave);
  daveTicketAt = Date.now();
  daveToken = await captureNegotiateToken(curlWith(daveCache));
});
afterEach((context) => {
  if (context.task.result?.state === 'fail') console.error(scenario?.server.process.output());
});
afterAll(async () => {
  await scenario?.stop();
});

const curlWith = (cache: string) => new CurlBrowser(scenario.directory, scenario.realm, cache);

describe('Kerberos sign-in with curl --negotiate', () => {
  it('says at start-up which service principal it accepts', () => {
    expect(scenario.server.process.output()).toContain(
      `kerberos: accepting tickets for HTTP/localhost@${REALM}`,
    );
  });

  it('signs alice in with her ticket: code, tokens, amr; then SSO into a second client without a prompt', async () => {
    const curl = curlWith(scenario.realm.kinit(scenario.alice));
    const { link, request } = await scenario.kerberosLink(curl);

    const signedIn = await curl.get(link, { negotiate: true });
    expect(signedIn.sentAuthorization.some((value) => value.startsWith('Negotiate '))).toBe(true);
    expect(signedIn.status).toBe(303);
    // RFC 4559 §5: the final response carries the server's mutual-authentication token.
    expect(header(signedIn, 'www-authenticate')).toMatch(/^Negotiate [A-Za-z0-9+/]+=*$/);
    const idToken = await scenario.redeem(
      scenario.codeOf(header(signedIn, 'location'), request.state),
      request.verifier,
    );
    expect(idToken.sub).toBe('u-alice');
    expect(idToken.amr).toContain(KERBEROS_AMR);
    expect(idToken.amr).not.toContain('pwd');
    expect(idToken.acr).toBe(KERBEROS_ACR);

    // Single sign-on: the session answers the second client at once, no page, no challenge.
    const second = scenario.authorizeUrl('kerb-second');
    const sso = await curl.get(second.url);
    expect([302, 303]).toContain(sso.status);
    expect(header(sso, 'www-authenticate')).toBeUndefined();
    const secondToken = await scenario.redeem(
      scenario.codeOf(header(sso, 'location'), second.state),
      second.verifier,
      'kerb-second',
    );
    expect(secondToken.sub).toBe('u-alice');
    expect(secondToken.sid).toBe(idToken.sid);
    expect(secondToken.amr).toContain(KERBEROS_AMR);

    // prompt=none with the session: a code, silently.
    const silent = scenario.authorizeUrl('kerb-second', { prompt: 'none' });
    expect(scenario.codeOf(header(await curl.get(silent.url), 'location'), silent.state)).toBeTruthy();
  });

  it('Kerberos alone does not satisfy a require_mfa client: the user is led to enrol a second factor', async () => {
    const curl = curlWith(scenario.realm.kinit(scenario.alice));
    const { link } = await scenario.kerberosLink(curl, 'kerb-mfa');
    const signedIn = await curl.get(link, { negotiate: true });
    expect(signedIn.status).toBe(303);
    // Not a code for the client: alice has no factor yet, so the next page enrols one.
    const next = new URL(header(signedIn, 'location') ?? '', scenario.server.issuer);
    expect(next.href.startsWith(REDIRECT_URI)).toBe(false);
    expect(next.searchParams.get('code')).toBeNull();
    expect(next.pathname).toMatch(/\/interaction\/[^/]+\/enrol$/);
    const enrol = await curl.get(next.href);
    expect(enrol.status).toBe(200);
    expect(enrol.body).toMatch(/data-totp-secret="[A-Z2-7]+"/);
  });

  it('never attempts Kerberos inside prompt=none: no session → login_required, no challenge', async () => {
    const curl = curlWith(scenario.realm.kinit(scenario.alice));
    const request = scenario.authorizeUrl('kerb-web', { prompt: 'none' });
    const response = await curl.get(request.url, { negotiate: true });
    expect([302, 303]).toContain(response.status);
    expect(header(response, 'www-authenticate')).toBeUndefined();
    // curl offered its ticket unasked; /authorize ignores it: prompt=none never signs in by Kerberos.
    const location = new URL(header(response, 'location') ?? '');
    expect(location.searchParams.get('error')).toBe('login_required');
  });

  it('without a ticket: one challenge whose body is the login form, and no loop', async () => {
    const curl = curlWith(scenario.realm.emptyCache());
    const { link } = await scenario.kerberosLink(curl);
    const challenged = await curl.get(link, { negotiate: true });
    expect(challenged.sentAuthorization).toEqual([]);
    expect(challenged.status).toBe(401);
    expect(header(challenged, 'www-authenticate')).toBe('Negotiate');
    expect(challenged.body).toMatch(/<form method="post"[^>]* action="[^"]*\/login(\?[^"]*)?"/);
    expect(challenged.body).toContain('name="password"');
    expect(challenged.body).toContain('role="alert"');
  });

  it('a token GSSAPI rejects → the login form with an explanation, 403 and no new challenge', async () => {
    const curl = curlWith(scenario.realm.emptyCache());
    const { link } = await scenario.kerberosLink(curl);
    const rejected = await curl.get(link, {
      authorization: `Negotiate ${Buffer.from('not a token').toString('base64')}`,
    });
    expect(rejected.status).toBe(403);
    expect(header(rejected, 'www-authenticate')).toBeUndefined();
    expect(rejected.body).toContain('name="password"');
    expect(rejected.body).toContain('role="alert"');
  });

  it('a valid ticket whose principal has no user → "not registered here", audited', async () => {
    const curl = curlWith(scenario.realm.kinit(scenario.carol));
    const { link } = await scenario.kerberosLink(curl);
    const response = await curl.get(link, { negotiate: true });
    expect(response.status).toBe(403);
    expect(response.body).toContain('Your organisation account is not registered here');
    expect(response.body).toContain('kerberos_principal_unknown');
    const audited = scenario.server.process
      .output()
      .split('\n')
      .filter((line) => line.includes('"event":"auth.login.failed"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audited).toContainEqual(
      expect.objectContaining({
        reason: 'kerberos_principal_unknown',
        kerberos_principal: scenario.carol.principal,
      }),
    );
  });

  it('a replayed token is refused, even with GSSAPI’s own replay cache off (shared record)', async () => {
    const cache = scenario.realm.kinit(scenario.alice);
    const token = await captureNegotiateToken(curlWith(cache));
    const first = curlWith(scenario.realm.emptyCache());
    const accepted = await first.get((await scenario.kerberosLink(first)).link, {
      authorization: `Negotiate ${token}`,
    });
    expect(accepted.status).toBe(303);
    const attacker = curlWith(scenario.realm.emptyCache());
    const replayed = await attacker.get((await scenario.kerberosLink(attacker)).link, {
      authorization: `Negotiate ${token}`,
    });
    expect(replayed.status).toBe(403);
    expect(replayed.body).toContain('name="password"');
  });
});

describe('the device flow', () => {
  it('approves a device on the verification page with Kerberos instead of a password', async () => {
    const { issuer } = scenario.server;
    const authorization = await postForm(`${issuer}/device_authorization`, {
      client_id: 'kerb-device',
      scope: 'openid profile',
    });
    expect(authorization.status).toBe(200);
    const curl = curlWith(scenario.realm.kinit(scenario.alice));
    const codePage = await curl.get(authorization.json.verification_uri_complete as string);
    expect(codePage.status).toBe(200);
    const entered = await curl.get(`${issuer}/device`, {
      form: { csrf: csrfOf(codePage.body), user_code: authorization.json.user_code as string },
    });
    expect(entered.status).toBe(303);
    const login = await curl.get(new URL(header(entered, 'location') ?? '', issuer).href);
    const link = kerberosLinkOf(login.body, issuer);
    expect(link).toMatch(/\/kerberos(\?|$)/);
    const signedIn = await curl.get(link as string, { negotiate: true });
    expect(signedIn.status).toBe(303);
    // RFC 8628 §5.4: the device flow always asks; consent follows the Kerberos step as after a password.
    const consentUrl = new URL(header(signedIn, 'location') ?? '', issuer).href;
    expect(new URL(consentUrl).pathname).toMatch(/\/consent$/);
    const consent = await curl.get(consentUrl);
    const approved = await curl.get(consentUrl, {
      form: { csrf: csrfOf(consent.body), decision: 'approve' },
    });
    expect(approved.status).toBe(200);

    const tokens = await postForm(`${issuer}/token`, {
      grant_type: DEVICE_GRANT,
      client_id: 'kerb-device',
      device_code: authorization.json.device_code as string,
    });
    expect(tokens.status).toBe(200);
    const idToken = jwtPayload(tokens.json.id_token as string);
    expect(idToken.sub).toBe('u-alice');
    expect(idToken.amr).toContain(KERBEROS_AMR);
  });
});

describe('an expired ticket (a principal with a one-minute maximum life)', () => {
  it('is refused by the server, and a client holding it cannot answer: the login form both ways', async () => {
    // The ticket's end plus the realm's 10 s clock skew (the service kit's testing/kerberos-realm.ts), then a margin.
    const expiredAt = daveTicketAt + 60_000 + 10_000 + 2_000;
    await new Promise((done) => setTimeout(done, Math.max(0, expiredAt - Date.now())));

    const presenter = curlWith(scenario.realm.emptyCache());
    const refused = await presenter.get((await scenario.kerberosLink(presenter)).link, {
      authorization: `Negotiate ${daveToken}`,
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('name="password"');

    const holder = curlWith(daveCache);
    const challenged = await holder.get((await scenario.kerberosLink(holder)).link, { negotiate: true });
    expect(challenged.status).toBe(401);
    expect(challenged.body).toContain('name="password"');
  });
});
