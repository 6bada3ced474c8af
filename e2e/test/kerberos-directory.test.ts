/**
 * Kerberos and the directory together: a ticket whose principal no seed user claims is mapped to
 * the directory entry holding it (`krbPrincipalName`), and signs that directory user in, with the
 * same account record as the directory password gives. A real MIT KDC (the service kit's testing/kerberos-realm.ts),
 * a real OpenLDAP (the auth server's slapd fixture) and curl `--negotiate` as the browser.
 */
import { randomBytes } from 'node:crypto';
import { REALM, type SlapdFixture, startSlapd } from '@oidc-orders/service-kit/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  CurlBrowser,
  csrfOf,
  header,
  KERBEROS_AMR,
  type KerberosScenario,
  startKerberosScenario,
} from '../src/kerberos-flows.js';

let slapd: SlapdFixture;
let scenario: KerberosScenario;
const carolPassword = `pw-${randomBytes(9).toString('base64url')}`;

beforeAll(async () => {
  slapd = await startSlapd();
  // carol has a principal in the realm but no seed user: only the directory knows her.
  await slapd.addPerson({
    uid: 'carol',
    password: carolPassword,
    cn: 'Carol Directory',
    mail: 'carol@example.test',
    krbPrincipalName: `carol@${REALM}`,
  });
  scenario = await startKerberosScenario({ env: slapd.env() });
});
afterEach((context) => {
  if (context.task.result?.state === 'fail') console.error(scenario?.server.process.output());
});
afterAll(async () => {
  await scenario?.stop();
  await slapd?.close();
});

describe('a Kerberos ticket of a directory user', () => {
  it('signs the directory user in, with the same sub as their directory password', async () => {
    const curl = new CurlBrowser(scenario.directory, scenario.realm, scenario.realm.kinit(scenario.carol));
    const { link, request } = await scenario.kerberosLink(curl);
    const signedIn = await curl.get(link, { negotiate: true });
    expect(signedIn.status).toBe(303);
    const byTicket = await scenario.redeem(
      scenario.codeOf(header(signedIn, 'location'), request.state),
      request.verifier,
    );
    expect(byTicket.amr).toContain(KERBEROS_AMR);
    expect(byTicket.sub).toEqual(expect.any(String));
    expect(byTicket.sub).not.toMatch(/^u-/);

    // The directory password, in a browser without the ticket's session, reaches the same person.
    // A fresh cookie jar: no session from the ticket; curl does not negotiate unless told.
    const plain = new CurlBrowser(scenario.directory, scenario.realm, curl.ccache);
    const password = scenario.authorizeUrl('kerb-web');
    const start = await plain.get(password.url);
    const loginUrl = new URL(header(start, 'location') ?? '', scenario.server.issuer).href;
    const login = await plain.get(loginUrl);
    const posted = await plain.get(loginUrl, {
      form: { csrf: csrfOf(login.body), username: 'carol', password: carolPassword },
    });
    expect(posted.status).toBe(303);
    const byPassword = await scenario.redeem(
      scenario.codeOf(header(posted, 'location'), password.state),
      password.verifier,
    );
    expect(byPassword.sub).toBe(byTicket.sub);
  });
});
