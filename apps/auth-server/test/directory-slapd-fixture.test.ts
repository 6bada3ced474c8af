import { execFileSync } from 'node:child_process';
import { describeWithSlapd, type SlapdFixture, startSlapd } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** The slapd fixture itself, seen through Debian's own tools (ldap-utils), not through ldapts. */

function ldapsearch(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync('ldapsearch', ['-x', '-LLL', ...args], {
    encoding: 'utf8',
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe.runIf(describeWithSlapd())('the slapd test fixture', () => {
  let slapd: SlapdFixture;
  beforeAll(async () => {
    slapd = await startSlapd();
    await slapd.addPerson({ uid: 'zoe', password: 'zoe-pw', mail: 'zoe@example.test' });
  }, 60_000);
  afterAll(async () => {
    await slapd?.close();
  });

  it('answers a search by the service account on ldap:// and ldaps:// (the throw-away CA)', () => {
    const asService = ['-D', slapd.serviceDn, '-w', slapd.servicePassword, '-b', slapd.baseDn];
    const plain = ldapsearch(['-H', slapd.url, ...asService, '(uid=zoe)', 'mail']);
    expect(plain).toContain('mail: zoe@example.test');
    const overTls = ldapsearch(['-H', slapd.ldapsUrl, ...asService, '(ou=*)', 'ou'], {
      ...process.env,
      LDAPTLS_CACERT: slapd.caFile,
    });
    expect(overTls.match(/^ou: /gm)?.length).toBe(4);
  });

  it('refuses an anonymous search and a wrong password', () => {
    // The access rules hide even the base entry from anonymous clients.
    expect(() => ldapsearch(['-H', slapd.url, '-b', slapd.baseDn, '(uid=zoe)'])).toThrow(/No such object/);
    expect(() =>
      ldapsearch(['-H', slapd.url, '-D', slapd.serviceDn, '-w', 'wrong', '-b', slapd.baseDn]),
    ).toThrow(/Invalid credentials/);
  });

  it('stops by its PID and starts again on the same port', async () => {
    await slapd.stop();
    expect(() => ldapsearch(['-H', slapd.url, '-b', slapd.baseDn, '-o', 'nettimeout=2'])).toThrow(
      /Can't contact LDAP server/,
    );
    await slapd.start();
    const search = [
      '-D',
      slapd.serviceDn,
      '-w',
      slapd.servicePassword,
      '-b',
      slapd.baseDn,
      '(uid=zoe)',
      'uid',
    ];
    expect(ldapsearch(['-H', slapd.url, ...search])).toContain('uid: zoe');
  });
});
