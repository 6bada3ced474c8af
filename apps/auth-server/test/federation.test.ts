import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  findFreePort,
  startUpstreamProvider,
  type UpstreamProviderFixture,
} from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import { generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  externalIdentities,
  pendingUpstreamLinks,
  ssoSessions,
  upstreamAuthorizations,
  users,
} from '../src/db/schema.js';
import { createUpstreamClients } from '../src/federation/upstream-client.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { upstreamProviderEntry } from './helpers/federation-app.js';
import { expectCodeFlowStart, federationFlows, hidden } from './helpers/federation-flow.js';
import { FetchBrowser } from './helpers/fetch-browser.js';
import { ALICE, CONSENTING, signInSeed, startSignInApp } from './sign-in-fixtures.js';

/**
 * Signing in through an upstream OpenID provider (README "Upstream identity providers"), against a
 * real `oidc-provider` on a loopback port and a real listener of ours, with openid-client as our
 * client's relying party. The browser is `fetch` with a cookie jar, following every redirect as a
 * browser would.
 */

const MFA_APP = {
  clientId: 'mfa-app',
  secret: 'mfa-app-secret-for-tests-0123456789',
  redirectUri: 'https://mfa.example.test/cb',
};

let upstream: UpstreamProviderFixture;
let started: Awaited<ReturnType<typeof startSignInApp>>;
let issuer: string;
let stalled: Server;
/** A second instance of our own server, as the upstream provider `ours`. */
let ourUpstream: Awaited<ReturnType<typeof startSignInApp>>;
let ourUpstreamIssuer: string;
const FEDERATING_CLIENT = { id: 'federating', secret: 'federating-secret-for-tests-0123456789' };

const provider = (id: string, providerIssuer: string, extra: Record<string, unknown> = {}) =>
  upstreamProviderEntry(upstream, id, providerIssuer, extra);

function federationSeed(downIssuer: string, slowIssuer: string, keyFile: string): SeedDocument {
  const seed = signInSeed();
  return {
    ...seed,
    clients: [
      ...(seed.clients ?? []),
      {
        client_id: MFA_APP.clientId,
        client_secret: MFA_APP.secret,
        redirect_uris: [MFA_APP.redirectUri],
        grant_types: ['authorization_code'],
        scope: 'openid profile email',
        require_mfa: true,
        skip_consent: true,
      },
    ],
    identity_providers: [
      provider('upstream', upstream.issuer, { trust_upstream_mfa: true, logout_at_provider: true }),
      provider('untrusted', upstream.issuer, { link_by_verified_email: true }),
      provider('down', downIssuer),
      provider('slow', slowIssuer),
      // The same upstream through its client that authenticates with a key, not a secret.
      provider('keyed', upstream.issuer, {
        client_id: upstream.keyedClient.clientId,
        client_secret: undefined,
        token_endpoint_auth_method: 'private_key_jwt',
        private_key_file: keyFile,
        private_key_id: upstream.keyedClient.kid,
      }),
      {
        ...provider('ours', ourUpstreamIssuer),
        client_id: FEDERATING_CLIENT.id,
        client_secret: FEDERATING_CLIENT.secret,
      },
    ],
  } as SeedDocument;
}

beforeAll(async () => {
  ourUpstreamIssuer = `http://127.0.0.1:${await findFreePort()}`;
  const port = await findFreePort();
  issuer = `http://127.0.0.1:${port}`;
  upstream = await startUpstreamProvider({
    redirectUris: ['upstream', 'untrusted', 'keyed'].map((id) => `${issuer}/idp/${id}/callback`),
    backchannelLogoutUri: `${issuer}/idp/upstream/backchannel-logout`,
  });
  // A provider that accepts connections and never answers.
  stalled = createHttpServer(() => {});
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  const stalledPort = (stalled.address() as { port: number }).port;
  seedDocument = federationSeed(
    `http://127.0.0.1:${await findFreePort()}`,
    `http://127.0.0.1:${stalledPort}`,
    keyFileOf(upstream.keyedClient.privateKeyPem),
  );
  started = await startSignInApp({
    env: { ISSUER: issuer },
    seed: seedDocument,
    upstreamClients: createUpstreamClients(1),
  });
  await started.app.listen({ port, host: '127.0.0.1' });
});
let seedDocument: SeedDocument;
/** The keyed client's private key in a file of its own, as a mounted secret would be. */
const keyFolder = mkdtempSync(join(tmpdir(), 'federation-key-'));
function keyFileOf(pem: string): string {
  const path = join(keyFolder, 'upstream-client-key.pem');
  writeFileSync(path, pem, { mode: 0o600 });
  return path;
}

afterAll(async () => {
  rmSync(keyFolder, { recursive: true, force: true });
  await ourUpstream?.close();
  await started?.close();
  await upstream?.close();
  stalled?.closeAllConnections();
  await new Promise((resolve) => stalled?.close(resolve));
});

const { toLoginPage, buttonHref, throughUpstream, finish, finishWithTokens, toLinkPage } = federationFlows(
  () => ({ issuer, upstream }),
);

async function signInThroughUpstream(id = 'upstream') {
  const browser = new FetchBrowser();
  const flow = await toLoginPage(browser, CONSENTING);
  const callback = await throughUpstream(browser, flow.page, id);
  const response = await browser.request(callback);
  expect(response.status).toBe(303);
  return finish(browser, response, flow);
}

describe('the login page', () => {
  it('shows one button per enabled provider, with its display name, whose GET starts a code flow with PKCE S256, state and nonce', async () => {
    const browser = new FetchBrowser();
    const { page } = await toLoginPage(browser, CONSENTING);
    expect(page).toContain('data-sign-in="idp:upstream"');
    expect(page).toContain('Sign in with Provider upstream');
    const start = await browser.request(buttonHref(page, 'upstream')!);
    expect(start.status).toBe(303);
    expectCodeFlowStart(start.headers.get('location')!, upstream.issuer, `${issuer}/idp/upstream/callback`);
  });
});

describe('signing in through an upstream provider', () => {
  it('creates a local user at the first sign-in, keyed by the upstream subject, with amr "fed" and the upstream amr', async () => {
    upstream.behaviour = {
      account: { sub: 'first-person', email: 'first@upstream.test', email_verified: true, name: 'First' },
      amr: ['pwd'],
    };
    const claims = await signInThroughUpstream();
    expect(claims.amr).toEqual(expect.arrayContaining(['fed', 'pwd']));
    const [identity] = await started.database.handle.db
      .select()
      .from(externalIdentities)
      .where(eq(externalIdentities.subject, 'first-person'));
    expect(identity).toMatchObject({ source: 'idp:upstream', sub: claims.sub });
    const [user] = await started.database.handle.db.select().from(users).where(eq(users.sub, claims.sub));
    expect(user).toMatchObject({ managedBy: 'federation', name: 'First', email: 'first@upstream.test' });
  });

  it('gives the same sub at a second sign-in, and another sub to another upstream subject', async () => {
    upstream.behaviour = { account: { sub: 'second-person', name: 'Second' } };
    const first = await signInThroughUpstream();
    upstream.behaviour = { account: { sub: 'second-person', name: 'Second, renamed' } };
    const again = await signInThroughUpstream();
    expect(again.sub).toBe(first.sub);
    const [user] = await started.database.handle.db.select().from(users).where(eq(users.sub, first.sub));
    expect(user?.name).toBe('Second, renamed');
    upstream.behaviour = { account: { sub: 'third-person' } };
    expect((await signInThroughUpstream()).sub).not.toBe(first.sub);
  });

  it('authenticates to the provider with private_key_jwt when configured (a client with no secret)', async () => {
    upstream.behaviour = { account: { sub: 'keyed-person', name: 'Keyed' } };
    const claims = await signInThroughUpstream('keyed');
    expect(claims.amr).toEqual(expect.arrayContaining(['fed']));
    const [identity] = await started.database.handle.db
      .select()
      .from(externalIdentities)
      .where(eq(externalIdentities.subject, 'keyed-person'));
    expect(identity).toMatchObject({ source: 'idp:keyed', sub: claims.sub });
  });

  it('keys the same upstream subject at two providers as two people', async () => {
    upstream.behaviour = { account: { sub: 'same-upstream-sub' } };
    const atOne = await signInThroughUpstream('upstream');
    const atOther = await signInThroughUpstream('untrusted');
    expect(atOther.sub).not.toBe(atOne.sub);
  });

  it('follows a key rotation at the provider (a new kid fetches its JWKS again)', async () => {
    upstream.behaviour = { account: { sub: 'rotation-person' } };
    const before = await signInThroughUpstream();
    await upstream.rotateKey();
    const after = await signInThroughUpstream();
    expect(after.sub).toBe(before.sub);
  });
});

describe('refusals', () => {
  it('shows the login page again (401) when the upstream answers access_denied', async () => {
    upstream.behaviour = { account: { sub: 'denied-person' }, deny: true };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const callback = await throughUpstream(browser, flow.page);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const response = await browser.request(callback);
    expect(response.status).toBe(401);
    const page = await response.text();
    expect(page).toContain('id="login-error"');
    expect(page).toContain('name="password"');
    upstream.behaviour = { account: { sub: 'denied-person' } };
  });

  it('refuses a tampered state, a replayed callback and a callback in another browser (400)', async () => {
    upstream.behaviour = { account: { sub: 'state-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const callback = await throughUpstream(browser, flow.page);
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const refused = await browser.request(tampered);
    expect(refused.status).toBe(400);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain('upstream_state_invalid');
    // A way on from a sign-in that cannot go on: the account page.
    expect(refusedPage).toContain(
      '<a class="button" href="/account" data-action="account">Go to your account</a>',
    );
    // Another browser: its cookie does not open the interaction the state belongs to.
    expect((await new FetchBrowser().request(callback)).status).toBe(403);
    // The other browser's attempt used the state up: a state is good for one try only.
    expect((await browser.request(callback)).status).toBe(400);
  });

  it("refuses another provider's state at this provider's callback (mix-up)", async () => {
    upstream.behaviour = { account: { sub: 'mixup-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const callback = await throughUpstream(browser, flow.page, 'upstream');
    const elsewhere = new URL(`${issuer}/idp/untrusted/callback${callback.search}`);
    const refused = await browser.request(elsewhere);
    expect(refused.status).toBe(400);
    // Refused for the state itself, before any code is sent to a token endpoint.
    expect(await refused.text()).toContain('upstream_state_invalid');
  });

  it('refuses an `iss` that is not the provider’s (RFC 9207) with a 400 page', async () => {
    upstream.behaviour = { account: { sub: 'iss-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const callback = await throughUpstream(browser, flow.page);
    expect(callback.searchParams.get('iss')).toBe(upstream.issuer);
    callback.searchParams.set('iss', 'https://attacker.example.test');
    const response = await browser.request(callback);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('upstream_response_invalid');
  });

  it('refuses an ID token whose nonce is not the one sent (400)', async () => {
    upstream.behaviour = { account: { sub: 'nonce-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const callback = await throughUpstream(browser, flow.page);
    // The stored nonce replaced: the ID token the provider issued carries the original one.
    await started.database.handle.db.update(upstreamAuthorizations).set({ nonce: client.randomNonce() });
    const response = await browser.request(callback);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('upstream_response_invalid');
  });
});

describe('assurance', () => {
  async function mfaAppSignIn(id: string) {
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, MFA_APP);
    const callback = await throughUpstream(browser, flow.page, id);
    const response = await browser.request(callback);
    expect(response.status).toBe(303);
    return { browser, flow, response };
  }

  it('lets a trusted provider’s MFA satisfy a require_mfa client', async () => {
    upstream.behaviour = { account: { sub: 'mfa-person' }, amr: ['pwd', 'otp'] };
    const { browser, flow, response } = await mfaAppSignIn('upstream');
    const claims = await finish(browser, response, flow);
    expect(claims.amr).toEqual(expect.arrayContaining(['fed', 'otp', 'mfa']));
    expect(claims.acr).toBe('urn:oidc-orders:acr:mfa');
  });

  it('asks for our own second factor after an untrusted provider, whatever its amr says', async () => {
    upstream.behaviour = { account: { sub: 'mfa-person' }, amr: ['pwd', 'otp', 'mfa'] };
    const { response } = await mfaAppSignIn('untrusted');
    expect(new URL(response.headers.get('location')!, issuer).pathname).toMatch(
      /\/interaction\/[^/]+\/enrol$/,
    );
  });
});

describe('several instances', () => {
  it('finishes at another instance (same database and issuer) a sign-in this one started', async () => {
    const otherPort = await findFreePort();
    const other = await startSignInApp({
      env: { ISSUER: issuer },
      database: started.database,
      seed: seedDocument,
      upstreamClients: createUpstreamClients(1),
    });
    try {
      await other.app.listen({ port: otherPort, host: '127.0.0.1' });
      upstream.behaviour = { account: { sub: 'balanced-person' } };
      const browser = new FetchBrowser();
      const flow = await toLoginPage(browser, CONSENTING);
      const callback = await throughUpstream(browser, flow.page, 'upstream');
      // The load balancer sends the provider's redirect to the other instance.
      callback.port = String(otherPort);
      const response = await browser.request(callback);
      expect(response.status).toBe(303);
      const claims = await finish(browser, response, flow);
      expect(claims.amr).toEqual(expect.arrayContaining(['fed']));
      const [identity] = await started.database.handle.db
        .select()
        .from(externalIdentities)
        .where(eq(externalIdentities.subject, 'balanced-person'));
      expect(identity?.sub).toBe(claims.sub);
    } finally {
      await other.close();
    }
  });
});

describe('faults', () => {
  it('answers 502 within the bound when the provider is down, and the password sign-in keeps working', async () => {
    const browser = new FetchBrowser();
    const { page, loginUrl } = await toLoginPage(browser, CONSENTING);
    const response = await browser.request(buttonHref(page, 'down')!);
    expect(response.status).toBe(502);
    expect(await response.text()).toContain('upstream_unavailable');
    const loginPage = await (await browser.request(loginUrl)).text();
    expect(loginPage).toContain('name="password"');
  });

  it('answers 504 when the provider does not answer in time', async () => {
    const browser = new FetchBrowser();
    const { page } = await toLoginPage(browser, CONSENTING);
    const began = Date.now();
    const response = await browser.request(buttonHref(page, 'slow')!);
    expect(response.status).toBe(504);
    expect(Date.now() - began).toBeLessThan(5000);
  });
});

describe('logout from the provider (OIDC Back-Channel Logout 1.0)', () => {
  const sessionsOf = (sub: string) =>
    started.database.handle.db.select().from(ssoSessions).where(eq(ssoSessions.sub, sub));

  it('ends the session the provider’s sign-in started when the provider logs the person out', async () => {
    upstream.behaviour = { account: { sub: 'logout-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const callback = await throughUpstream(browser, flow.page);
    const claims = await finish(browser, await browser.request(callback), flow);
    expect(await sessionsOf(claims.sub)).toHaveLength(1);
    // The provider's own logout page and its confirmation form.
    const endPage = await (await browser.request(`${upstream.issuer}/session/end`)).text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(endPage)?.[1] ?? '';
    const confirmed = await browser.request(`${upstream.issuer}/session/end/confirm`, {
      method: 'POST',
      form: { xsrf, logout: 'yes' },
    });
    expect(confirmed.status).toBe(303);
    await expect.poll(async () => (await sessionsOf(claims.sub)).length, { timeout: 5000 }).toBe(0);
  });

  it('refuses a logout token the provider did not sign (400), and ends nothing', async () => {
    upstream.behaviour = { account: { sub: 'forged-logout-person' } };
    const claims = await signInThroughUpstream();
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({
      sub: 'forged-logout-person',
      events: { 'http://schemas.openid.net/event/backchannel-logout': {} },
      jti: 'forged-1',
    })
      .setProtectedHeader({ alg: 'ES256', kid: upstream.currentKid() })
      .setIssuer(upstream.issuer)
      .setAudience(upstream.clientId)
      .setIssuedAt()
      .setExpirationTime('2m')
      .sign(privateKey);
    const response = await fetch(`${issuer}/idp/upstream/backchannel-logout`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ logout_token: forged }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'invalid_request' });
    expect(await sessionsOf(claims.sub)).toHaveLength(1);
  });
});

describe('the account page', () => {
  it('lists the linked provider and refuses to unlink the only way in of a federated account', async () => {
    upstream.behaviour = { account: { sub: 'account-page-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const claims = await finish(
      browser,
      await browser.request(await throughUpstream(browser, flow.page)),
      flow,
    );
    const page = await (await browser.request(`${issuer}/account`)).text();
    expect(page).toContain('data-linked-provider="upstream"');
    const unlink = `${issuer}/account/providers/upstream/unlink`;
    const refused = await browser.request(unlink, { method: 'POST', form: hidden(page) });
    // Post/redirect/get: the notice is on the page the redirect leads to.
    expect(refused.status).toBe(303);
    const after = await (await browser.request(new URL(refused.headers.get('location')!, issuer))).text();
    expect(after).toContain('only way to sign in');
    const identities = () =>
      started.database.handle.db
        .select()
        .from(externalIdentities)
        .where(eq(externalIdentities.sub, claims.sub));
    expect(await identities()).toHaveLength(1);

    // With a second provider linked, the first one can go.
    await started.database.handle.db
      .insert(externalIdentities)
      .values({ source: 'idp:untrusted', subject: 'account-page-person', sub: claims.sub, createdAt: 1 });
    const unlinked = await browser.request(unlink, { method: 'POST', form: hidden(page) });
    expect(unlinked.status).toBe(303);
    expect((await identities()).map((row) => row.source)).toEqual(['idp:untrusted']);
  });
});

describe('our own server as the upstream provider', () => {
  beforeAll(async () => {
    const seed = signInSeed();
    ourUpstream = await startSignInApp({
      env: { ISSUER: ourUpstreamIssuer },
      seed: {
        ...seed,
        clients: [
          ...(seed.clients ?? []),
          {
            client_id: FEDERATING_CLIENT.id,
            client_secret: FEDERATING_CLIENT.secret,
            redirect_uris: [`${issuer}/idp/ours/callback`],
            grant_types: ['authorization_code'],
            scope: 'openid profile email',
            skip_consent: true,
          },
        ],
      },
    });
    await ourUpstream.app.listen({ port: Number(new URL(ourUpstreamIssuer).port), host: '127.0.0.1' });
  });

  it('signs in with a password at the other instance and comes back with a stable sub and amr fed, pwd', async () => {
    const signIn = async () => {
      const browser = new FetchBrowser();
      const flow = await toLoginPage(browser, CONSENTING);
      let response = await browser.request(buttonHref(flow.page, 'ours')!);
      let location = new URL(response.headers.get('location')!, issuer);
      expect(location.origin).toBe(ourUpstreamIssuer);
      response = await browser.request(location);
      location = new URL(response.headers.get('location')!, ourUpstreamIssuer);
      const upstreamLogin = await (await browser.request(location)).text();
      response = await browser.request(location, {
        method: 'POST',
        form: { ...hidden(upstreamLogin), username: ALICE.username, password: ALICE.password },
      });
      const callback = new URL(response.headers.get('location')!, ourUpstreamIssuer);
      expect(`${callback.origin}${callback.pathname}`).toBe(`${issuer}/idp/ours/callback`);
      // RFC 9207: our server sends `iss` with the code, and the federating side checked it.
      expect(callback.searchParams.get('iss')).toBe(ourUpstreamIssuer);
      return finish(browser, await browser.request(callback), flow);
    };
    const first = await signIn();
    expect(first.amr).toEqual(expect.arrayContaining(['fed', 'pwd']));
    const [identity] = await started.database.handle.db
      .select()
      .from(externalIdentities)
      .where(eq(externalIdentities.sub, first.sub));
    expect(identity).toMatchObject({ source: 'idp:ours', subject: ALICE.sub });
    expect((await signIn()).sub).toBe(first.sub);
  });
});

describe('our logout continued at the provider (logout_at_provider)', () => {
  it('sends the browser to the provider’s end_session_endpoint with its id_token_hint, then back to the client', async () => {
    upstream.behaviour = { account: { sub: 'rp-logout-person' } };
    const browser = new FetchBrowser();
    const flow = await toLoginPage(browser, CONSENTING);
    const tokens = await finishWithTokens(
      browser,
      await browser.request(await throughUpstream(browser, flow.page)),
      flow,
    );
    const logout = client.buildEndSessionUrl(flow.config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: CONSENTING.postLogoutRedirectUri,
      state: 'after-logout',
    });
    const toProvider = await browser.request(logout);
    const providerLogout = new URL(toProvider.headers.get('location')!);
    expect(`${providerLogout.origin}${providerLogout.pathname}`).toBe(`${upstream.issuer}/session/end`);
    expect(providerLogout.searchParams.get('id_token_hint')).toMatch(/^ey/);
    expect(providerLogout.searchParams.get('post_logout_redirect_uri')).toBe(
      `${issuer}/idp/upstream/signed-out`,
    );
    // Our session is over before the browser leaves.
    const sessions = await started.database.handle.db
      .select()
      .from(ssoSessions)
      .where(eq(ssoSessions.sub, tokens.claims()!.sub));
    expect(sessions).toHaveLength(0);

    const endPage = await (await browser.request(providerLogout)).text();
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(endPage)?.[1] ?? '';
    const confirmed = await browser.request(`${upstream.issuer}/session/end/confirm`, {
      method: 'POST',
      form: { xsrf, logout: 'yes' },
    });
    const back = new URL(confirmed.headers.get('location')!);
    expect(`${back.origin}${back.pathname}`).toBe(`${issuer}/idp/upstream/signed-out`);
    const toClient = await browser.request(back);
    expect(toClient.status).toBe(303);
    const target = new URL(toClient.headers.get('location')!);
    expect(`${target.origin}${target.pathname}`).toBe(CONSENTING.postLogoutRedirectUri);
    expect(target.searchParams.get('state')).toBe('after-logout');
  });
});

describe('linking to an existing account by verified e-mail', () => {
  const ALICE_EMAIL = 'alice@example.test';
  const identitiesOf = (subject: string) =>
    started.database.handle.db
      .select()
      .from(externalIdentities)
      .where(eq(externalIdentities.subject, subject));

  const toAliceLinkPage = (id: string, subject: string, emailVerified: boolean) =>
    toLinkPage(
      id,
      { sub: subject, email: ALICE_EMAIL.toUpperCase(), email_verified: emailVerified },
      CONSENTING,
    );

  it('links only after the existing account’s password, and signs that account in', async () => {
    const { browser, flow, response } = await toAliceLinkPage('untrusted', 'alice-at-upstream', true);
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('data-form="link-account"');
    expect(await identitiesOf('alice-at-upstream')).toHaveLength(0);
    // The offer is a row of its own shape (which identity waits for which account), not a started
    // authorization with the upstream subject in another column.
    const { db } = started.database.handle;
    const offers = await db
      .select()
      .from(pendingUpstreamLinks)
      .where(eq(pendingUpstreamLinks.upstreamSubject, 'alice-at-upstream'));
    expect(offers).toMatchObject([{ providerId: 'untrusted', sub: ALICE.sub, usedAt: null }]);
    expect(
      await db.select().from(upstreamAuthorizations).where(eq(upstreamAuthorizations.purpose, 'link')),
    ).toEqual([]);
    const action = new URL(/action="([^"]+)"/.exec(page)![1]!, issuer);
    const linked = await browser.request(action, {
      method: 'POST',
      form: { ...hidden(page), password: ALICE.password },
    });
    expect(linked.status).toBe(303);
    const claims = await finish(browser, linked, flow);
    expect(claims.sub).toBe(ALICE.sub);
    expect(await identitiesOf('alice-at-upstream')).toMatchObject([
      { source: 'idp:untrusted', sub: ALICE.sub },
    ]);
  });

  it('shows the link page at its own address, without the callback’s code and state, in this browser only', async () => {
    const { browser, response, callbackAnswer } = await toAliceLinkPage(
      'untrusted',
      'clean-at-upstream',
      true,
    );
    expect(callbackAnswer.status).toBe(303);
    expect(callbackAnswer.headers.get('cache-control')).toBe('no-store');
    const address = new URL(callbackAnswer.headers.get('location')!, issuer);
    expect(address.pathname).toMatch(/^\/interaction\/[^/]+\/idp\/untrusted\/link$/);
    expect(address.search).toBe('');
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('data-form="link-account"');
    expect(page).toContain(ALICE_EMAIL.toUpperCase());
    // A reload shows the same page, with the same pending link.
    const reloaded = await browser.request(address);
    expect(hidden(await reloaded.text()).link).toBe(hidden(page).link);
    // Another browser has neither the interaction nor the offer.
    expect((await new FetchBrowser().request(address)).status).toBeGreaterThanOrEqual(400);
  });

  it('refuses the link with a wrong password (401) and links nothing', async () => {
    const { browser, response } = await toAliceLinkPage('untrusted', 'mallory-at-upstream', true);
    const page = await response.text();
    const action = new URL(/action="([^"]+)"/.exec(page)![1]!, issuer);
    const refused = await browser.request(action, {
      method: 'POST',
      form: { ...hidden(page), password: 'guess' },
    });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('link_proof_refused');
    expect(await identitiesOf('mallory-at-upstream')).toHaveLength(0);
    // The pending link was good for one try.
    const again = await browser.request(action, {
      method: 'POST',
      form: { ...hidden(page), password: ALICE.password },
    });
    expect(again.status).toBe(400);
  });

  it('never offers the link for an unverified address, nor at a provider not trusted for it', async () => {
    const unverified = await toAliceLinkPage('untrusted', 'unverified-at-upstream', false);
    expect(unverified.response.status).toBe(303);
    const notTrusted = await toAliceLinkPage('upstream', 'verified-elsewhere', true);
    expect(notTrusted.response.status).toBe(303);
    const [a] = await identitiesOf('unverified-at-upstream');
    const [b] = await identitiesOf('verified-elsewhere');
    expect(a?.sub).not.toBe(ALICE.sub);
    expect(b?.sub).not.toBe(ALICE.sub);
  });
});
