import type { Logger } from 'drizzle-orm/logger';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/database.js';
import { ALICE, authorizePath, CONSENTING, pkcePair, signInSeed } from './sign-in-fixtures.js';

/**
 * What a whole sign-in asks the database (docs/sign-in-and-sessions.md "What one step reads"):
 * /authorize → login page → password → consent page (prompt=consent) → Allow → code → token →
 * UserInfo, every statement counted through Drizzle's query logger. The bench measures what each
 * costs; this file keeps the ones taken out from coming back.
 */

const statements: string[] = [];
const counting: Logger = { logQuery: (query) => void statements.push(query.replace(/\s+/g, ' ')) };

let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  const database = await createTestDatabase({ logger: counting });
  ({ app, close } = await startTestApp({ seed: signInSeed(), database }));
});
afterAll(async () => {
  await close?.();
});

/** One whole sign-in in a fresh browser; returns the statements it issued. */
async function signInOnce(language: string): Promise<string[]> {
  await new Promise((resolve) => setTimeout(resolve, 0));
  statements.length = 0;
  const browser = new TestBrowser(app, { acceptLanguage: language });
  const { verifier, challenge } = pkcePair();
  const login = await browser.follow(
    await browser.get(
      authorizePath({
        client_id: CONSENTING.clientId,
        redirect_uri: CONSENTING.redirectUri,
        response_type: 'code',
        scope: 'openid email',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 's-1',
        prompt: 'consent',
      }),
    ),
  );
  const consent = await browser.follow(
    await browser.post(browser.lastUrl, {
      ...hiddenFields(login.body),
      username: ALICE.username,
      password: ALICE.password,
    }),
  );
  expect(consent.body).toContain('name="decision"');
  const approved = await browser.post(browser.lastUrl, {
    ...hiddenFields(consent.body),
    decision: 'approve',
  });
  const code = locationOf(approved).searchParams.get('code');
  expect(code).toBeTruthy();
  const token = await app.inject({
    method: 'POST',
    url: '/token',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${CONSENTING.clientId}:${CONSENTING.secret}`).toString('base64')}`,
    },
    payload: new URLSearchParams({
      grant_type: 'authorization_code',
      code: code ?? '',
      redirect_uri: CONSENTING.redirectUri,
      code_verifier: verifier,
    }).toString(),
  });
  expect(token.statusCode).toBe(200);
  const userinfo = await app.inject({
    method: 'GET',
    url: '/userinfo',
    headers: { authorization: `Bearer ${token.json().access_token}` },
  });
  expect(userinfo.json().sub).toBe(ALICE.sub);
  return [...statements];
}

const matching = (issued: string[], pattern: RegExp) => issued.filter((query) => pattern.test(query));

describe('the statements of a whole sign-in', () => {
  it('records the language only when it changed', async () => {
    const first = await signInOnce('de');
    expect(matching(first, /^update "users" set "locale"/)).toHaveLength(1);
    const again = await signInOnce('de');
    expect(matching(again, /^update "users" set "locale"/)).toHaveLength(0);
    const french = await signInOnce('fr');
    expect(matching(french, /^update "users" set "locale"/)).toHaveLength(1);
  });

  it('writes nothing on the interaction at the approval it completes', async () => {
    const issued = await signInOnce('fr');
    // The login is recorded on the interaction by the statement that writes the session.
    expect(matching(issued, /update "interactions"/)).toEqual([
      expect.stringMatching(
        /^with "new_session" as \(insert into "sso_sessions" .*\) update "interactions" set "login_sid"/,
      ),
    ]);
    expect(matching(issued, /insert into "sso_sessions"/)).toHaveLength(1);
    // The consuming delete remembers the consent in the same statement.
    expect(matching(issued, /delete from "interactions"/)).toEqual([
      expect.stringMatching(/^with "consumed" as \(delete from "interactions" .*\(insert into "consents"/),
    ]);
    expect(matching(issued, /insert into "consents"/)).toHaveLength(1);
  });

  it('reads the sign-in subject apart only after the login: the pages after it have it with the interaction', async () => {
    const issued = await signInOnce('fr');
    const subjectReads = matching(issued, /from "totp_credentials" as "factor"/);
    const withInteraction = matching(subjectReads, /^select "interactions"\./);
    // The login page, the password, the consent page and Allow read the interaction (with it).
    expect(withInteraction).toHaveLength(4);
    // Apart: only the password step's, once the session exists.
    expect(subjectReads.length - withInteraction.length).toBe(1);
  });

  it('stays within its budget of statements', async () => {
    const issued = await signInOnce('fr');
    // The login limiter's counters (on by default; docs/security-and-operations.md "Rate limits"):
    // the IP's and the username's counted together before the password check, the account's after
    // it, then the success taken back in one statement.
    const limiter = matching(issued, /"rate_limit_counters"/);
    expect(limiter).toHaveLength(3);
    // The rest, one by one in docs/sign-in-and-sessions.md "What one step reads".
    expect(issued.length - limiter.length).toBeLessThanOrEqual(13);
  });

  it('writes no passkey challenge for the login page’s button: a sign-in’s challenge is sealed', async () => {
    const issued = await signInOnce('fr');
    expect(matching(issued, /"webauthn_challenges"/)).toEqual([]);
  });
});
