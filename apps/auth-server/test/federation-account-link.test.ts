import {
  findFreePort,
  type SmtpFixture,
  startSmtpServer,
  startUpstreamProvider,
  type UpstreamProviderFixture,
} from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS } from '../src/audit.js';
import { externalIdentities, upstreamAuthorizations } from '../src/db/schema.js';
import { issuerName } from '../src/mail/messages.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { upstreamProviderEntry } from './helpers/federation-app.js';
import { expectCodeFlowStart, federationFlows, hidden } from './helpers/federation-flow.js';
import { FetchBrowser } from './helpers/fetch-browser.js';
import { captureLogs } from './helpers/security.js';
import { ALICE, BOB, CONSENTING, signInSeed, startSignInApp } from './sign-in-fixtures.js';

/**
 * Linking an upstream OpenID provider from the account page (README "Upstream identity
 * providers"), against a real `oidc-provider` on a loopback port and a real listener of ours. The
 * browser is `fetch` with a cookie jar, following every redirect as a browser would.
 */

const logs = captureLogs();
let upstream: UpstreamProviderFixture;
/** A real SMTP server: linking and unlinking tell the account's owner (security notices). */
let smtp: SmtpFixture;
let started: Awaited<ReturnType<typeof startSignInApp>>;
let issuer: string;
/** Our app's clock: real time, moved forward by a test to make a sign-in old. */
let clockOffsetSeconds = 0;
const clock = { nowSeconds: () => Math.floor(Date.now() / 1000) + clockOffsetSeconds };

beforeAll(async () => {
  const port = await findFreePort();
  issuer = `http://127.0.0.1:${port}`;
  upstream = await startUpstreamProvider({
    redirectUris: ['upstream', 'second'].map((id) => `${issuer}/idp/${id}/callback`),
    backchannelLogoutUri: `${issuer}/idp/upstream/backchannel-logout`,
  });
  const seed = signInSeed();
  smtp = await startSmtpServer();
  started = await startSignInApp({
    env: { ISSUER: issuer, SMTP_URL: smtp.url },
    clock,
    logger: logs.logger,
    seed: {
      ...seed,
      identity_providers: [
        upstreamProviderEntry(upstream, 'upstream', upstream.issuer),
        upstreamProviderEntry(upstream, 'second', upstream.issuer),
      ],
    } as SeedDocument,
  });
  await started.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await started?.close();
  await upstream?.close();
  await smtp?.close();
});

// Each test starts with no linked identity.
beforeEach(async () => {
  clockOffsetSeconds = 0;
  await started.database.handle.db.delete(externalIdentities);
});

const { toLoginPage, throughUpstream, upstreamToCallback, finish } = federationFlows(() => ({
  issuer,
  upstream,
}));

const linksOf = (sub: string) =>
  started.database.handle.db.select().from(externalIdentities).where(eq(externalIdentities.sub, sub));

/** Signs `user` in with their password from the account page, in a new browser; returns it and the page. */
async function signedInAccountPage(user: { username: string; password: string }) {
  const browser = new FetchBrowser();
  let response = await browser.request(`${issuer}/account`);
  const loginUrl = new URL(response.headers.get('location')!, issuer);
  const loginPage = await (await browser.request(loginUrl)).text();
  response = await browser.request(loginUrl, {
    method: 'POST',
    form: { ...hidden(loginPage), username: user.username, password: user.password },
  });
  for (let hops = 0; hops < 10 && response.status === 303; hops += 1) {
    response = await browser.request(new URL(response.headers.get('location')!, issuer));
  }
  expect(response.status).toBe(200);
  return { browser, page: await response.text() };
}

/**
 * "Link <provider>": the POST answers a page of ours (not a redirect, which CSP form-action would
 * block) that goes on to the provider; its "Continue" link and its meta refresh name the same URL.
 */
async function startLink(browser: FetchBrowser, page: string, providerId = 'upstream') {
  const answer = await browser.request(`${issuer}/account/providers/${providerId}/link`, {
    method: 'POST',
    form: hidden(page),
  });
  expect(answer.status).toBe(200);
  const body = await answer.text();
  const href = /<a id="continue" class="button" href="([^"]+)"/.exec(body)?.[1]?.replaceAll('&amp;', '&');
  expect(href).toBeDefined();
  expect(body).toContain(`<meta http-equiv="refresh" content="0; url=${href!.replaceAll('&', '&amp;')}">`);
  return new URL(href!);
}

/** "Link <provider>" on the account page, through the upstream's pages, up to (not into) our callback. */
async function linkUpToCallback(browser: FetchBrowser, page: string, providerId = 'upstream') {
  const target = await startLink(browser, page, providerId);
  const toUpstream = await browser.request(target);
  return { target, callback: await upstreamToCallback(browser, toUpstream) };
}

/** Our answer to the callback, followed to the account page it leads to. */
async function accountPageAfter(browser: FetchBrowser, answer: Response) {
  expect(answer.status).toBe(303);
  const location = new URL(answer.headers.get('location')!, issuer);
  expect(location.pathname).toBe('/account');
  return (await browser.request(location)).text();
}

/** A sign-in at our client through the provider as `upstreamSub`, in a new browser: the ID token's claims. */
async function signInThroughProvider(upstreamSub: string) {
  upstream.behaviour = { account: { sub: upstreamSub } };
  const browser = new FetchBrowser();
  const flow = await toLoginPage(browser, CONSENTING);
  const answer = await browser.request(await throughUpstream(browser, flow.page));
  expect(answer.status).toBe(303);
  return finish(browser, answer, flow);
}

describe('linking a provider from the account page', () => {
  it('shows a Link button for each enabled provider not linked yet, and starts a code flow with PKCE S256, state and nonce', async () => {
    const { browser, page } = await signedInAccountPage(ALICE);
    expect(page).toContain('data-provider="upstream">Link Provider upstream</button>');
    expect(page).toContain('data-provider="second">Link Provider second</button>');
    const target = await startLink(browser, page);
    expectCodeFlowStart(target.href, upstream.issuer, `${issuer}/idp/upstream/callback`);
  });

  it('links the provider to a password user, after which signing in through it gives that user’s sub', async () => {
    upstream.behaviour = { account: { sub: 'alice-upstream' } };
    const { browser, page } = await signedInAccountPage(ALICE);
    const { callback } = await linkUpToCallback(browser, page);
    const after = await accountPageAfter(browser, await browser.request(callback));
    expect(after).toContain('Linked Provider upstream.');
    expect(after).toContain('data-linked-provider="upstream"');
    // The Link button is offered only for the provider not linked yet.
    expect(after).not.toContain('data-provider="upstream">Link');
    expect(after).toContain('data-provider="second">Link Provider second</button>');
    expect((await linksOf(ALICE.sub)).map((row) => [row.source, row.subject])).toEqual([
      ['idp:upstream', 'alice-upstream'],
    ]);
    expect(logs.events(AUDIT_EVENTS.identityLinked)).toContainEqual(
      expect.objectContaining({ sub: ALICE.sub, method: 'idp:upstream' }),
    );
    expect(logs.text()).not.toContain(callback.searchParams.get('code')!);
    const notice = await smtp.nextMailTo('alice@example.test', {
      subject: `A sign-in service was linked to your account at ${issuerName(issuer)}`,
    });
    expect(notice.parsed.text).toContain('Signing in with Provider upstream was linked to your account');
    expect((await signInThroughProvider('alice-upstream')).sub).toBe(ALICE.sub);
  });

  it('refuses (409) to link an upstream subject already linked to another user, and changes nothing', async () => {
    upstream.behaviour = { account: { sub: 'taken-upstream' } };
    const alice = await signedInAccountPage(ALICE);
    await accountPageAfter(
      alice.browser,
      await alice.browser.request((await linkUpToCallback(alice.browser, alice.page)).callback),
    );
    const bob = await signedInAccountPage(BOB);
    const { callback } = await linkUpToCallback(bob.browser, bob.page);
    const refused = await bob.browser.request(callback);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('This sign-in already belongs to another account');
    expect(await linksOf(BOB.sub)).toEqual([]);
    expect((await linksOf(ALICE.sub)).map((row) => row.subject)).toEqual(['taken-upstream']);
  });

  it('says so when the subject is already linked to this very user', async () => {
    upstream.behaviour = { account: { sub: 'alice-again' } };
    const { browser, page } = await signedInAccountPage(ALICE);
    await started.database.handle.db
      .insert(externalIdentities)
      .values({ source: 'idp:second', subject: 'alice-again', sub: ALICE.sub, createdAt: 1 });
    const { callback } = await linkUpToCallback(browser, page, 'second');
    const after = await accountPageAfter(browser, await browser.request(callback));
    expect(after).toContain('Provider second is already linked.');
    expect(await linksOf(ALICE.sub)).toHaveLength(1);
  });

  it('refuses (400) the callback in another browser, even one signed in as the same user, and links nothing', async () => {
    upstream.behaviour = { account: { sub: 'other-browser-upstream' } };
    const { browser, page } = await signedInAccountPage(ALICE);
    const { callback } = await linkUpToCallback(browser, page);
    const other = await signedInAccountPage(ALICE);
    const refused = await other.browser.request(callback);
    expect(refused.status).toBe(400);
    const refusedPage = await refused.text();
    expect(refusedPage).toContain('This link cannot be finished here');
    expect(refusedPage).toContain(
      '<a class="button" href="/account" data-action="account">Go to your account</a>',
    );
    expect(await linksOf(ALICE.sub)).toEqual([]);
    // The state was used by the refused attempt: the right browser cannot finish it afterwards either.
    expect((await browser.request(callback)).status).toBe(400);
    expect(await linksOf(ALICE.sub)).toEqual([]);
  });

  it('refuses (400) the callback when the account session of the browser is no longer the user who started it', async () => {
    upstream.behaviour = { account: { sub: 'signed-out-upstream' } };
    const { browser, page } = await signedInAccountPage(ALICE);
    const { callback } = await linkUpToCallback(browser, page);
    browser.forgetCookies('op_session');
    expect((await browser.request(callback)).status).toBe(400);
    expect(await linksOf(ALICE.sub)).toEqual([]);
  });

  it('returns to the account page with a notice when the provider answers access_denied, and links nothing', async () => {
    upstream.behaviour = { account: { sub: 'denied-upstream' }, deny: true };
    const { browser, page } = await signedInAccountPage(ALICE);
    const { callback } = await linkUpToCallback(browser, page);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const after = await accountPageAfter(browser, await browser.request(callback));
    expect(after).toContain('Linking Provider upstream was cancelled or refused. Nothing was linked.');
    expect(await linksOf(ALICE.sub)).toEqual([]);
  });

  it('lets a password user unlink it again, after which the provider no longer signs them in', async () => {
    upstream.behaviour = { account: { sub: 'unlinked-upstream' } };
    const { browser, page } = await signedInAccountPage(ALICE);
    const linked = await accountPageAfter(
      browser,
      await browser.request((await linkUpToCallback(browser, page)).callback),
    );
    const unlink = await browser.request(`${issuer}/account/providers/upstream/unlink`, {
      method: 'POST',
      form: hidden(linked),
    });
    const after = await accountPageAfter(browser, unlink);
    expect(after).toContain('Sign-in service unlinked.');
    expect(after).toContain('data-provider="upstream">Link Provider upstream</button>');
    expect(await linksOf(ALICE.sub)).toEqual([]);
    expect(logs.events(AUDIT_EVENTS.identityUnlinked)).toContainEqual(
      expect.objectContaining({ sub: ALICE.sub, method: 'idp:upstream' }),
    );
    const notice = await smtp.nextMailTo('alice@example.test', {
      subject: `A sign-in service was unlinked from your account at ${issuerName(issuer)}`,
    });
    expect(notice.parsed.text).toContain('Signing in with Provider upstream was unlinked from your account');
    expect((await signInThroughProvider('unlinked-upstream')).sub).not.toBe(ALICE.sub);
  });

  it('records the started link bound to this user and no interaction, with purpose account_link', async () => {
    const { browser, page } = await signedInAccountPage(ALICE);
    await startLink(browser, page, 'second');
    const rows = await started.database.handle.db
      .select()
      .from(upstreamAuthorizations)
      .where(eq(upstreamAuthorizations.purpose, 'account_link'));
    expect(rows.filter((row) => row.usedAt === null && row.providerId === 'second')).toEqual([
      expect.objectContaining({ linkSub: ALICE.sub, interactionId: null }),
    ]);
  });

  it('asks for a new sign-in first when the last one is older than five minutes, and starts nothing', async () => {
    const { browser, page } = await signedInAccountPage(ALICE);
    clockOffsetSeconds = 6 * 60;
    const countStarted = async () =>
      (
        await started.database.handle.db
          .select()
          .from(upstreamAuthorizations)
          .where(eq(upstreamAuthorizations.purpose, 'account_link'))
      ).length;
    const before = await countStarted();
    const answer = await browser.request(`${issuer}/account/providers/upstream/link`, {
      method: 'POST',
      form: hidden(page),
    });
    expect(answer.status).toBe(303);
    const location = new URL(answer.headers.get('location')!, issuer);
    expect(location.pathname).toMatch(/^\/interaction\/[^/]+\/login$/);
    expect(await countStarted()).toBe(before);
  });
});
