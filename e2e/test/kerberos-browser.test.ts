/**
 * Kerberos single sign-on in Debian's Chromium against a real MIT KDC (src/kerberos-realm.ts):
 * the browser runs with `--auth-server-allowlist=localhost` and KRB5CCNAME pointing at the user's
 * credential cache, as a signed-in desktop would. Left out where Kerberos or Chromium is missing
 * (never under CI, e2e/system-requirements.ts).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, type TestBrowser } from '../src/browser.js';
import { postForm } from '../src/instances.js';
import {
  DEVICE_GRANT,
  jwtPayload,
  KERBEROS_AMR,
  type KerberosScenario,
  REDIRECT_URI,
  startKerberosScenario,
} from '../src/kerberos-flows.js';

let scenario: KerberosScenario;
let browser: TestBrowser | undefined;

beforeAll(async () => {
  scenario = await startKerberosScenario();
});
afterEach(async (context) => {
  if (context.task.result?.state === 'fail') console.error(scenario?.server.process.output());
  await browser?.close();
  browser = undefined;
});
afterAll(async () => {
  await scenario?.stop();
});

describe('Kerberos sign-in in Chromium', () => {
  const chromiumWith = (cache: string) =>
    launchBrowser({
      args: ['--auth-server-allowlist=localhost'],
      env: { ...scenario.realm.env, KRB5CCNAME: cache },
    });

  it('signs in through the login page link with the ticket of KRB5CCNAME', async () => {
    browser = await chromiumWith(scenario.realm.kinit(scenario.alice));
    const { page, context } = browser;
    const callback = new Promise<URL>((done) => {
      void context.route(`${REDIRECT_URI}**`, (route) => {
        done(new URL(route.request().url()));
        void route.fulfill({ status: 200, body: 'signed in' });
      });
    });
    const request = scenario.authorizeUrl('kerb-web');
    await page.goto(request.url);
    await page.locator('[data-sign-in="kerberos"]').click();
    const redirected = await callback;
    const idToken = await scenario.redeem(scenario.codeOf(redirected.href, request.state), request.verifier);
    expect(idToken.sub).toBe('u-alice');
    expect(idToken.amr).toContain(KERBEROS_AMR);
  });

  it('without a ticket the link shows the login form with the explanation', async () => {
    browser = await chromiumWith(scenario.realm.emptyCache());
    const { page } = browser;
    await page.goto(scenario.authorizeUrl('kerb-web').url);
    await page.locator('[data-sign-in="kerberos"]').click();
    await page.waitForURL((url) => url.pathname.endsWith('/kerberos'));
    await expect.poll(() => page.getByRole('alert').count()).toBe(1);
    expect(await page.getByLabel('Password').count()).toBe(1);
  });

  it('approves a device on the verification page with Kerberos', async () => {
    const authorization = await postForm(`${scenario.server.issuer}/device_authorization`, {
      client_id: 'kerb-device',
      scope: 'openid profile',
    });
    expect(authorization.status).toBe(200);
    browser = await chromiumWith(scenario.realm.kinit(scenario.alice));
    const { page } = browser;
    await page.goto(authorization.json.verification_uri_complete as string);
    await page.getByRole('button').first().click();
    await page.locator('[data-sign-in="kerberos"]').click();
    await page.waitForURL((url) => url.pathname.endsWith('/consent'));
    await page.getByRole('button', { name: 'Allow' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Device connected');
    const tokens = await postForm(`${scenario.server.issuer}/token`, {
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
