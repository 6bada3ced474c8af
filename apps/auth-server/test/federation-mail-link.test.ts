import {
  findFreePort,
  type SmtpFixture,
  startSmtpServer,
  startUpstreamProvider,
  type UpstreamProviderFixture,
  urlsIn,
} from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalIdentities, users } from '../src/db/schema.js';
import { createUpstreamClients } from '../src/federation/upstream-client.js';
import { issuerName } from '../src/mail/messages.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { upstreamProviderEntry } from './helpers/federation-app.js';
import { federationFlows, hidden } from './helpers/federation-flow.js';
import { FetchBrowser } from './helpers/fetch-browser.js';
import { captureLogs } from './helpers/security.js';
import { ALICE, CONSENTING, signInSeed, startSignInApp } from './sign-in-fixtures.js';

/**
 * The mailed proof of an e-mail link (README "Upstream identity providers"): a first federated
 * sign-in whose verified address is an existing account's may link to it after a link mailed to
 * that account's own address is opened, and its button pressed, in the browser where the sign-in
 * started. A real `oidc-provider` upstream, our app listening, a real SMTP server receiving.
 */

const ALICE_EMAIL = 'alice@example.test';
/** An account without a local password (as a passkey-only or directory account is). */
const CAROL = {
  sub: 'u-carol',
  username: 'carol',
  password: 'carol-password-for-tests',
  email: 'carol@example.test',
};

/** An account with a password, linked once here, whose mailbox sees only the notice of that link. */
const ERIN = {
  sub: 'u-erin',
  username: 'erin',
  password: 'erin-password-for-tests',
  email: 'erin@example.test',
};

let upstream: UpstreamProviderFixture;
let smtp: SmtpFixture;
const logs = captureLogs('debug');
let withMail: { issuer: string; started: Awaited<ReturnType<typeof startSignInApp>> };
let withoutMail: { issuer: string; started: Awaited<ReturnType<typeof startSignInApp>> };
/** Every token mailed in this file, for the log check. */
const mailedTokens: string[] = [];

function seed(): SeedDocument {
  const base = signInSeed();
  const provider = (id: string, extra: Record<string, unknown>) =>
    upstreamProviderEntry(upstream, id, upstream.issuer, extra);
  return {
    ...base,
    users: [...(base.users ?? []), CAROL, ERIN],
    identity_providers: [provider('linking', { link_by_verified_email: true }), provider('plain', {})],
  } as SeedDocument;
}

async function startApp(
  port: number,
  env: Record<string, string>,
  logger?: ReturnType<typeof captureLogs>['logger'],
) {
  const issuer = `http://127.0.0.1:${port}`;
  const started = await startSignInApp({
    env: { ISSUER: issuer, ...env },
    seed: seed(),
    upstreamClients: createUpstreamClients(1),
    ...(logger ? { logger } : {}),
  });
  // Carol has no password here: only a mailed link can prove her account.
  await started.database.handle.db
    .update(users)
    .set({ passwordHash: 'passkey-only (no password)' })
    .where(eq(users.sub, CAROL.sub));
  await started.app.listen({ port, host: '127.0.0.1' });
  return { issuer, started };
}

beforeAll(async () => {
  const ports = [await findFreePort(), await findFreePort()];
  smtp = await startSmtpServer();
  upstream = await startUpstreamProvider({
    redirectUris: ports.map((port) => `http://127.0.0.1:${port}/idp/linking/callback`),
  });
  withMail = await startApp(ports[0]!, { SMTP_URL: smtp.url, LOG_LEVEL: 'debug' }, logs.logger);
  withoutMail = await startApp(ports[1]!, {});
});
afterAll(async () => {
  await withMail?.started.close();
  await withoutMail?.started.close();
  await upstream?.close();
  await smtp?.close();
});

const flows = federationFlows(() => ({ issuer: withMail.issuer, upstream }));
const flowsWithoutMail = federationFlows(() => ({ issuer: withoutMail.issuer, upstream }));

const identitiesOf = (subject: string) =>
  withMail.started.database.handle.db
    .select()
    .from(externalIdentities)
    .where(eq(externalIdentities.subject, subject));

const formAction = (page: string, form: string, issuer: string) => {
  const match = new RegExp(`<form method="post" action="([^"]+)" class="stack" data-form="${form}">`).exec(
    page,
  );
  return match ? new URL(match[1]!, issuer) : null;
};

/** The next link mail to `email` (security notices of earlier links go to the same address). */
const nextLinkMailTo = (email: string) =>
  smtp.nextMailTo(email, {
    subject: `Link Provider linking to your account at ${issuerName(withMail.issuer)}`,
  });

/** A first sign-in at `linking` as `subject` with Alice's verified address, then "E-mail me a link". */
async function mailedLinkFor(subject: string, browser = new FetchBrowser(), email = ALICE_EMAIL) {
  const account = { sub: subject, email: email.toUpperCase(), email_verified: true };
  const { flow, response } = await flows.toLinkPage('linking', account, CONSENTING, browser);
  expect(response.status).toBe(200);
  const page = await response.text();
  const sent = await browser.request(formAction(page, 'link-account-mail', withMail.issuer)!, {
    method: 'POST',
    form: hidden(page),
  });
  const mail = await nextLinkMailTo(email);
  const [url] = urlsIn(mail.parsed.text);
  const token = new URL(url!).searchParams.get('token')!;
  mailedTokens.push(token);
  return { browser, flow, sent, mail, url: new URL(url!), token };
}

/** Opens the mailed link's page and presses its button. */
async function pressMailedLink(browser: FetchBrowser, url: URL) {
  const page = await browser.request(url);
  expect(page.status).toBe(200);
  const html = await page.text();
  return browser.request(formAction(html, 'mailed-link', withMail.issuer)!, {
    method: 'POST',
    form: hidden(html),
  });
}

describe('the link page', () => {
  it('offers the password and "E-mail me a link" when mail is configured', async () => {
    const account = { sub: 'offered-both', email: ALICE_EMAIL, email_verified: true };
    const { response } = await flows.toLinkPage('linking', account, CONSENTING);
    const page = await response.text();
    expect(page).toContain('data-form="link-account"');
    expect(page).toContain('data-form="link-account-mail"');
    expect(page).toContain('E-mail me a link');
  });

  it('offers no mailed link when mail is not configured', async () => {
    const account = { sub: 'offered-password', email: ALICE_EMAIL, email_verified: true };
    const { response } = await flowsWithoutMail.toLinkPage('linking', account, CONSENTING);
    const page = await response.text();
    expect(response.status).toBe(200);
    expect(page).toContain('data-form="link-account"');
    expect(page).not.toContain('data-form="link-account-mail"');
    expect(page).not.toContain('E-mail me a link');
  });

  it('offers an account without a password only the mailed link, and without mail no link at all', async () => {
    const account = { sub: 'carol-at-upstream', email: CAROL.email, email_verified: true };
    const page = await (await flows.toLinkPage('linking', account, CONSENTING)).response.text();
    expect(page).toContain('data-form="link-account-mail"');
    expect(page).not.toContain('data-form="link-account"');
    const without = await flowsWithoutMail.toLinkPage('linking', account, CONSENTING);
    const unavailable = await without.response.text();
    expect(unavailable).toContain('data-link="unavailable"');
    expect(unavailable).not.toContain('<form');
  });
});

describe('the mailed link', () => {
  it('goes to the existing account’s own address, masked on the page, and links and signs in that account', async () => {
    const { browser, flow, sent, mail, url } = await mailedLinkFor('alice-by-mail');
    expect(sent.status).toBe(200);
    expect(await sent.text()).toContain('We sent a link to a…e@example.test.');
    expect(mail.to).toEqual([ALICE_EMAIL]);
    expect(mail.parsed.text).toContain('Provider linking');
    expect(mail.parsed.text).toContain('ignore this mail: nothing is linked without it');
    expect(`${url.origin}${url.pathname}`).toBe(`${withMail.issuer}/idp/linking/link`);
    // Opening the page (as a mail scanner would) links nothing.
    expect((await browser.request(url)).status).toBe(200);
    expect(await identitiesOf('alice-by-mail')).toHaveLength(0);
    const linked = await pressMailedLink(browser, url);
    expect(linked.status).toBe(303);
    const claims = await flows.finish(browser, linked, flow);
    expect(claims.sub).toBe(ALICE.sub);
    expect(await identitiesOf('alice-by-mail')).toMatchObject([{ source: 'idp:linking', sub: ALICE.sub }]);
  });

  it('is refused in another browser (400), links nothing there, and still works where the sign-in started', async () => {
    const { browser, flow, url, token } = await mailedLinkFor('alice-elsewhere');
    const fresh = new FetchBrowser();
    const other = new FetchBrowser();
    await flows.toLoginPage(other, CONSENTING);
    for (const elsewhere of [fresh, other]) {
      const opened = await elsewhere.request(url);
      expect(opened.status).toBe(400);
      expect(await opened.text()).toContain('Open the link in the browser where you started signing in');
      const pressed = await elsewhere.request(new URL(url.pathname, url), {
        method: 'POST',
        form: { token },
      });
      expect(pressed.status).toBe(400);
      expect(await pressed.text()).toContain('link_mail_other_browser');
    }
    expect(await identitiesOf('alice-elsewhere')).toHaveLength(0);
    const linked = await pressMailedLink(browser, url);
    expect(linked.status).toBe(303);
    expect((await flows.finish(browser, linked, flow)).sub).toBe(ALICE.sub);
  });

  it('works once', async () => {
    const { browser, url } = await mailedLinkFor('alice-once');
    const page = await (await browser.request(url)).text();
    const action = formAction(page, 'mailed-link', withMail.issuer)!;
    expect((await browser.request(action, { method: 'POST', form: hidden(page) })).status).toBe(303);
    const again = await browser.request(action, { method: 'POST', form: hidden(page) });
    expect(again.status).toBe(400);
    expect(await again.text()).toContain('link_mail_invalid');
    expect((await browser.request(url)).status).toBe(400);
  });

  it('is refused once the sign-in it was mailed for is over, and links nothing', async () => {
    const { browser, flow, url } = await mailedLinkFor('alice-too-late');
    // The person signs in with the password instead; the interaction ends at the client.
    const signedIn = await browser.request(flow.loginUrl, {
      method: 'POST',
      form: { ...hidden(flow.page), username: ALICE.username, password: ALICE.password },
    });
    expect(signedIn.status).toBe(303);
    await flows.finish(browser, signedIn, flow);
    const opened = await browser.request(url);
    expect(opened.status).toBe(400);
    expect(await opened.text()).toContain('interaction_expired');
    expect(await identitiesOf('alice-too-late')).toHaveLength(0);
  });

  it('ends the pending link: after "E-mail me a link" the password form of that sign-in is refused', async () => {
    const browser = new FetchBrowser();
    const account = { sub: 'alice-one-proof', email: ALICE_EMAIL, email_verified: true };
    const { response } = await flows.toLinkPage('linking', account, CONSENTING, browser);
    const page = await response.text();
    const mailAction = formAction(page, 'link-account-mail', withMail.issuer)!;
    expect((await browser.request(mailAction, { method: 'POST', form: hidden(page) })).status).toBe(200);
    mailedTokens.push(
      new URL(urlsIn((await nextLinkMailTo(ALICE_EMAIL)).parsed.text)[0]!).searchParams.get('token')!,
    );
    const password = await browser.request(formAction(page, 'link-account', withMail.issuer)!, {
      method: 'POST',
      form: { ...hidden(page), password: ALICE.password },
    });
    expect(password.status).toBe(400);
    expect(await identitiesOf('alice-one-proof')).toHaveLength(0);
  });

  it('links only the upstream subject and continues only the sign-in it was mailed for', async () => {
    const first = await mailedLinkFor('dora-first');
    // The same browser signs in again, as another upstream account with the same verified address.
    first.browser.forgetCookies('_session');
    const account = { sub: 'dora-second', email: ALICE_EMAIL, email_verified: true };
    const second = await flows.toLinkPage('linking', account, CONSENTING, first.browser);
    expect(second.response.status).toBe(200);
    // At another provider's path the link is not valid.
    const elsewhere = new URL(`/idp/plain/link?token=${encodeURIComponent(first.token)}`, withMail.issuer);
    expect((await first.browser.request(elsewhere)).status).toBe(400);
    const linked = await pressMailedLink(first.browser, first.url);
    expect(linked.status).toBe(303);
    // The code is the first authorization request's (its state, nonce and PKCE verifier).
    expect((await flows.finish(first.browser, linked, first.flow)).sub).toBe(ALICE.sub);
    expect(await identitiesOf('dora-first')).toMatchObject([{ sub: ALICE.sub }]);
    expect(await identitiesOf('dora-second')).toHaveLength(0);
    // The second sign-in's own pending link is untouched: its password proof links the second subject.
    const page = await second.response.text();
    const proven = await first.browser.request(formAction(page, 'link-account', withMail.issuer)!, {
      method: 'POST',
      form: { ...hidden(page), password: ALICE.password },
    });
    expect(proven.status).toBe(303);
    expect(await identitiesOf('dora-second')).toMatchObject([{ sub: ALICE.sub }]);
  });
});

describe('security notices', () => {
  it('tell the account’s owner, at its own address, that a sign-in service was linked', async () => {
    const browser = new FetchBrowser();
    const account = { sub: 'erin-at-upstream', email: ERIN.email, email_verified: true };
    const { flow, response } = await flows.toLinkPage('linking', account, CONSENTING, browser);
    const page = await response.text();
    const linked = await browser.request(formAction(page, 'link-account', withMail.issuer)!, {
      method: 'POST',
      form: { ...hidden(page), password: ERIN.password },
    });
    expect((await flows.finish(browser, linked, flow)).sub).toBe(ERIN.sub);
    const notice = await smtp.nextMailTo(ERIN.email, {
      subject: `A sign-in service was linked to your account at ${issuerName(withMail.issuer)}`,
    });
    expect(notice.parsed.text).toContain('Signing in with Provider linking was linked to your account');
  });
});

describe('logs', () => {
  it('never carry a mailed link or its token', () => {
    expect(mailedTokens.length).toBeGreaterThanOrEqual(6);
    const text = logs.text();
    expect(text).toContain('mail sent');
    expect(text).toContain('linked_by_mailed_link');
    for (const token of mailedTokens) {
      expect(text).not.toContain(token);
      expect(text).not.toContain(encodeURIComponent(token));
    }
  });
});
