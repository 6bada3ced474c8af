import {
  findFreePort,
  type SmtpFixture,
  startSmtpServer,
  startUpstreamProvider,
  type UpstreamAccount,
  type UpstreamProviderFixture,
  urlsIn,
} from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { externalIdentities, mailTokens, users } from '../src/db/schema.js';
import { createUpstreamClients } from '../src/federation/upstream-client.js';
import { issuerName } from '../src/mail/messages.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { hiddenFields, TestBrowser } from './browser.js';
import { upstreamProviderEntry } from './helpers/federation-app.js';
import { federationFlows } from './helpers/federation-flow.js';
import { FetchBrowser } from './helpers/fetch-browser.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { CONSENTING, signInSeed, startSignInApp } from './sign-in-fixtures.js';

/**
 * Who an address belongs to (README "Security and operations", "Accounts"; src/accounts/): an
 * upstream identity that merely claims someone's address never receives their password reset, a
 * federated account gets no reset at all, an upstream's `email_verified` never makes another
 * account's address verified for it, and completing a reset never verifies an address another
 * account has as its own. A real `oidc-provider` upstream, our app listening, a real SMTP server.
 */

/** A seed user whose address the operator gave (not verified): still hers. */
const DANA = {
  sub: 'u-dana',
  username: 'dana',
  password: 'dana-password-for-tests',
  email: 'dana@example.test',
};
/** Alice's address is verified in the test seed. */
const ALICE_EMAIL = 'alice@example.test';
/** A second seed user, for the reset that must not verify an address another account owns. */
const GWEN = {
  sub: 'u-gwen',
  username: 'gwen',
  password: 'gwen-password-for-tests',
  email: 'gwen@example.test',
};

let upstream: UpstreamProviderFixture;
let smtp: SmtpFixture;
let issuer: string;
let started: Awaited<ReturnType<typeof startSignInApp>>;

function seed(): SeedDocument {
  const base = signInSeed();
  return {
    ...base,
    users: [...(base.users ?? []), DANA, GWEN],
    identity_providers: [upstreamProviderEntry(upstream, 'plain', upstream.issuer)],
  } as SeedDocument;
}

beforeAll(async () => {
  const port = await findFreePort();
  issuer = `http://127.0.0.1:${port}`;
  smtp = await startSmtpServer();
  upstream = await startUpstreamProvider({ redirectUris: [`${issuer}/idp/plain/callback`] });
  started = await startSignInApp({
    env: { ISSUER: issuer, SMTP_URL: smtp.url },
    seed: seed(),
    upstreamClients: createUpstreamClients(1),
    mail: { rateLimits: { perRecipient: 100, perClientAddress: 1000 } },
  });
  await started.app.listen({ port, host: '127.0.0.1' });
});
afterAll(async () => {
  await started?.close();
  await upstream?.close();
  await smtp?.close();
});

const flows = federationFlows(() => ({ issuer, upstream }));
const db = () => started.database.handle.db;

/** A first sign-in through `plain` as `account`: the ID token's claims and the local row it made. */
async function firstFederatedSignIn(account: UpstreamAccount) {
  upstream.behaviour = { account };
  const browser = new FetchBrowser();
  const flow = await flows.toLoginPage(browser, CONSENTING);
  const response = await browser.request(await flows.throughUpstream(browser, flow.page, 'plain'));
  expect(response.status).toBe(303);
  const claims = await flows.finish(browser, response, flow);
  const [identity] = await db()
    .select()
    .from(externalIdentities)
    .where(eq(externalIdentities.subject, account.sub));
  const [row] = await db().select().from(users).where(eq(users.sub, identity!.sub));
  return { claims, row: row! };
}

/** The forgot-password form, as a browser fills it; the mails it causes are handed over before it returns. */
async function askForReset(email: string) {
  const browser = new TestBrowser(started.app);
  const form = await browser.get('/forgot-password');
  expect(form.statusCode).toBe(200);
  const answer = await browser.post('/forgot-password', { ...hiddenFields(form.body), email });
  expect(answer.statusCode).toBe(200);
  await started.app.passwordRecovery!.settled();
}

const resetTokensOf = async (sub: string) =>
  (await db().select().from(mailTokens).where(eq(mailTokens.sub, sub))).filter(
    (row) => row.purpose === 'password_reset',
  );

async function resetWithMailedLink(to: string, newPassword: string) {
  const mail = await smtp.nextMailTo(to, { subject: `Reset your password for ${issuerName(issuer)}` });
  const [link] = urlsIn(mail.parsed.text);
  const browser = new TestBrowser(started.app);
  const page = await browser.get(link!);
  expect(page.statusCode).toBe(200);
  return browser.post(link!, {
    ...hiddenFields(page.body),
    new_password: newPassword,
    confirm_password: newPassword,
  });
}

describe('an upstream identity claiming an address', () => {
  it('that is not verified upstream is stored unverified, and never receives the reset of the address’s owner', async () => {
    const { claims, row } = await firstFederatedSignIn({
      sub: 'mallory-claims-dana',
      email: DANA.email,
      email_verified: false,
    });
    expect(claims.email_verified).toBe(false);
    expect(row.emailVerified).toBe(false);

    await askForReset(DANA.email.toUpperCase());
    expect(await resetTokensOf(row.sub)).toHaveLength(0);
    expect(await resetTokensOf(DANA.sub)).toHaveLength(1);
    // The mailed link resets Dana's own account: her new password signs her in.
    expect((await resetWithMailedLink(DANA.email, 'dana-new-password-1')).statusCode).toBe(200);
    const { browser, page } = await openLoginPage(started.app);
    expect((await submitLogin(browser, page, DANA.username, 'dana-new-password-1')).statusCode).toBe(303);
    // The federated account's address stays unverified.
    const [after] = await db().select().from(users).where(eq(users.sub, row.sub));
    expect(after?.emailVerified).toBe(false);
  });

  it('that the upstream says is verified is not verified here when it is another account’s own', async () => {
    const { claims, row } = await firstFederatedSignIn({
      sub: 'eve-claims-alice',
      email: ALICE_EMAIL,
      email_verified: true,
    });
    expect(claims.email).toBe(ALICE_EMAIL);
    expect(claims.email_verified).toBe(false);
    expect(row.emailVerified).toBe(false);
  });

  it('that nobody else holds is stored verified, as the upstream said', async () => {
    const { claims } = await firstFederatedSignIn({
      sub: 'frank-own-address',
      email: 'frank@upstream.test',
      email_verified: true,
    });
    expect(claims.email_verified).toBe(true);
  });
});

describe('a federated account', () => {
  it('gets no password reset, by the form or by an operator, even at its own verified address', async () => {
    const { row } = await firstFederatedSignIn({
      sub: 'henry-only-upstream',
      email: 'henry@upstream.test',
      email_verified: true,
    });
    await askForReset('henry@upstream.test');
    expect(await resetTokensOf(row.sub)).toHaveLength(0);
    expect(await started.app.passwordRecovery!.sendResetLinkTo(row.sub)).toEqual({
      sent: false,
      reason: 'no_local_password',
    });
    expect(smtp.received.some((mail) => mail.to.includes('henry@upstream.test'))).toBe(false);
  });
});

describe('completing a reset', () => {
  it('never marks an address verified that another account has as its own', async () => {
    await askForReset(GWEN.email);
    // Before Gwen uses her link, the address becomes another account's verified one (an older
    // row, or an operator's change).
    await db().update(users).set({ email: GWEN.email, emailVerified: true }).where(eq(users.sub, DANA.sub));
    try {
      expect((await resetWithMailedLink(GWEN.email, 'gwen-new-password-1')).statusCode).toBe(200);
      const [gwen] = await db().select().from(users).where(eq(users.sub, GWEN.sub));
      expect(gwen?.emailVerified).toBe(false);
    } finally {
      await db()
        .update(users)
        .set({ email: DANA.email, emailVerified: false })
        .where(eq(users.sub, DANA.sub));
    }
  });
});
