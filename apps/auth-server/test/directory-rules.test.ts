import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config.js';
import {
  activeDirectoryRefusal,
  mustChangeAfterBind,
  passwordPolicyRefusal,
} from '../src/directory/bind-outcomes.js';
import { parseDirectoryConfig } from '../src/directory/config.js';
import { inChainMemberFilter } from '../src/directory/groups.js';
import { createServerOrder, passwordModifyRequest, userFilterFor } from '../src/directory/ldap-directory.js';
import { decodeObjectGuid, encodeObjectGuid } from '../src/directory/object-guid.js';
import { openDirectory } from '../src/directory/open-directory.js';
import { createServiceBindGuard } from '../src/directory/service-bind-guard.js';
import { testConfig } from './helpers/app.js';

const complete = {
  LDAP_URL: 'ldap://ldap1.example.test ldaps://ldap2.example.test:636',
  LDAP_BIND_DN: 'cn=service,dc=example,dc=test',
  LDAP_BIND_PASSWORD: 'service-password',
  LDAP_USER_BASE_DN: 'ou=people,dc=example,dc=test',
};

describe('directory settings', () => {
  it('are off without LDAP_URL, whatever else is set', () => {
    expect(parseDirectoryConfig({ LDAP_BIND_DN: 'x' })).toEqual({ config: null, problems: [] });
  });

  it('take OpenLDAP inetOrgPerson defaults and several servers in order', () => {
    const { config, problems } = parseDirectoryConfig(complete);
    expect(problems).toEqual([]);
    expect(config?.urls).toEqual(['ldap://ldap1.example.test', 'ldaps://ldap2.example.test:636']);
    expect(config?.userFilter).toBe('(uid={username})');
    expect(config?.attributes).toEqual({
      id: 'entryUUID',
      username: 'uid',
      name: 'cn',
      email: 'mail',
      kerberosPrincipal: 'krbPrincipalName',
    });
    expect(config?.timeoutMs).toBe(3000);
  });

  it('name every mistake at once, one line each, and never echo the bind password', () => {
    const { config, problems } = parseDirectoryConfig({
      LDAP_URL: 'http://ldap.example.test',
      LDAP_START_TLS: 'yes',
      LDAP_USER_FILTER: '(uid=*)',
      LDAP_TIMEOUT_MS: '5',
      LDAP_BIND_PASSWORD: 'hunter2-secret',
    });
    expect(config).toBeNull();
    expect(problems).toEqual([
      'LDAP_URL: "http://ldap.example.test" is not an ldap://host[:port] or ldaps://host[:port] URL',
      'LDAP_START_TLS must be true or false (got "yes")',
      'LDAP_BIND_DN is required when LDAP_URL is set (the service account that searches)',
      'LDAP_USER_BASE_DN is required when LDAP_URL is set (where users are searched)',
      'LDAP_USER_FILTER must contain {username}, e.g. (uid={username})',
      'LDAP_TIMEOUT_MS must be a whole number of milliseconds between 100 and 60000',
    ]);
    expect(problems.join('\n')).not.toContain('hunter2');
  });

  it('refuse StartTLS over ldaps://, unbalanced filters and a missing password', () => {
    const { problems } = parseDirectoryConfig({
      ...complete,
      LDAP_BIND_PASSWORD: '',
      LDAP_START_TLS: 'true',
      LDAP_USER_FILTER: '(&(uid={username})',
      LDAP_ENABLED_FILTER: 'active=TRUE',
    });
    expect(problems).toEqual([
      'LDAP_START_TLS=true upgrades ldap:// connections; ldaps:// URLs are TLS already',
      'LDAP_BIND_PASSWORD is required when LDAP_URL is set (or LDAP_BIND_PASSWORD_FILE)',
      'LDAP_USER_FILTER is not an LDAP filter: it must be one parenthesised expression',
      'LDAP_ENABLED_FILTER is not an LDAP filter: it must be one parenthesised expression',
    ]);
  });
});

describe('LDAP_CA_FILE', () => {
  const folder = mkdtempSync(join(tmpdir(), 'ldap-ca-'));
  writeFileSync(join(folder, 'not-a-certificate.pem'), 'hello');
  writeFileSync(join(folder, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');

  it.each([
    ['missing.pem', `LDAP_CA_FILE: cannot read ${join(folder, 'missing.pem')} (ENOENT)`],
    [
      'not-a-certificate.pem',
      `LDAP_CA_FILE: ${join(folder, 'not-a-certificate.pem')} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`,
    ],
  ])('%s is a line at start, resolved against the start directory', (file, line) => {
    expect(parseDirectoryConfig({ ...complete, LDAP_CA_FILE: file }, folder).problems).toEqual([line]);
  });

  it('a readable PEM file is kept with its full path', () => {
    const { config, problems } = parseDirectoryConfig({ ...complete, LDAP_CA_FILE: 'ca.pem' }, folder);
    expect(problems).toEqual([]);
    expect(config?.caFile).toBe(join(folder, 'ca.pem'));
  });
});

describe('the username in the search filter (RFC 4515 §3)', () => {
  it.each([
    ['*', '(uid=\\2a)'],
    [')(uid=*', '(uid=\\29\\28uid=\\2a)'],
    ['*)(|(uid=*', '(uid=\\2a\\29\\28|\\28uid=\\2a)'],
    ['a\\b', '(uid=a\\5cb)'],
    ['nul\u0000', '(uid=nul\\00)'],
  ])('%j becomes a value, never syntax', (username, filter) => {
    expect(userFilterFor('(uid={username})', username).toLowerCase()).toBe(filter);
  });
});

describe('the Password Modify request (RFC 3062 §2)', () => {
  it('is a SEQUENCE of the [0] identity, [1] old and [2] new password', () => {
    expect(passwordModifyRequest('uid=a', { oldPassword: 'b', newPassword: 'cd' }).toString('hex')).toBe(
      // 30 0e: SEQUENCE; 80 05 "uid=a"; 81 01 "b"; 82 02 "cd"
      ['300e', '8005', '7569643d61', '8101', '62', '8202', '6364'].join(''),
    );
  });
});

describe('nested groups on Active Directory', () => {
  it('are asked of the server with LDAP_MATCHING_RULE_IN_CHAIN on the member attribute, the DN escaped', () => {
    const { config } = parseDirectoryConfig({
      ...complete,
      LDAP_GROUP_BASE_DN: 'OU=Groups,DC=corp,DC=example,DC=com',
      LDAP_GROUP_FILTER: '(objectClass=group)',
      LDAP_MATCHING_RULE_IN_CHAIN: 'true',
    });
    if (config === null) throw new Error('settings refused');
    expect(inChainMemberFilter(config, 'CN=Ann (HR)*,OU=Staff,DC=corp,DC=example,DC=com')).toBe(
      '(&(objectClass=group)(member:1.2.840.113556.1.4.1941:=CN=Ann \\28HR\\29\\2a,OU=Staff,DC=corp,DC=example,DC=com))',
    );
  });
});

describe('objectGUID', () => {
  // The example of .NET's Guid.ToByteArray documentation: the same layout Active Directory stores.
  const bytes = Uint8Array.from([
    0xc9, 0x8b, 0x91, 0x35, 0x6d, 0x19, 0xea, 0x40, 0x97, 0x79, 0x88, 0x9d, 0x79, 0xb7, 0x53, 0xf0,
  ]);

  it('is decoded with its first three fields little-endian', () => {
    expect(decodeObjectGuid(bytes)).toBe('35918bc9-196d-40ea-9779-889d79b753f0');
  });

  it('encodes back to the stored bytes for a search, and refuses what is not a GUID', () => {
    expect(encodeObjectGuid('35918BC9-196D-40EA-9779-889D79B753F0')).toEqual(bytes);
    expect(encodeObjectGuid('35918bc9196d40ea9779889d79b753f0')).toBeNull();
    expect(decodeObjectGuid(bytes.subarray(0, 15))).toBeNull();
  });
});

describe('refused binds', () => {
  it.each([
    ['52e', { kind: 'invalid_credentials' }],
    ['525', { kind: 'invalid_credentials' }],
    ['530', { kind: 'not_permitted', reason: 'time' }],
    ['531', { kind: 'not_permitted', reason: 'workstation' }],
    ['532', { kind: 'password_expired', canChange: true }],
    ['533', { kind: 'account_disabled' }],
    ['701', { kind: 'account_expired' }],
    ['773', { kind: 'must_change_password', canChange: true }],
    ['775', { kind: 'account_locked' }],
  ])('Active Directory sub-code %s', (code, outcome) => {
    const message = `80090308: LdapErr: DSID-0C09044E, comment: AcceptSecurityContext error, data ${code}, v4563`;
    expect(activeDirectoryRefusal(message)).toEqual(outcome);
  });

  it('an OpenLDAP message names no sub-code', () => {
    expect(activeDirectoryRefusal('Invalid Credentials')).toBeNull();
  });

  it('the password-policy control: expired, locked, must change after reset', () => {
    expect(passwordPolicyRefusal({ error: 0 })).toEqual({ kind: 'password_expired', canChange: false });
    expect(passwordPolicyRefusal({ error: 1 })).toEqual({ kind: 'account_locked' });
    expect(passwordPolicyRefusal({ graceAuthNsRemaining: 2 })).toBeNull();
    expect(passwordPolicyRefusal(undefined)).toBeNull();
    expect(mustChangeAfterBind({ error: 2 })).toBe(true);
    expect(mustChangeAfterBind({ timeBeforeExpiration: 60 })).toBe(false);
  });
});

describe('the order of the servers', () => {
  it('puts a server that failed last for 30 seconds, and back in place when it answers', () => {
    let now = 0;
    const order = createServerOrder(['ldap://a', 'ldap://b', 'ldap://c'], () => now);
    order.failed('ldap://a');
    expect(order.inOrder()).toEqual(['ldap://b', 'ldap://c', 'ldap://a']);
    now = 29_999;
    expect(order.inOrder()[0]).toBe('ldap://b');
    now = 30_000;
    expect(order.inOrder()).toEqual(['ldap://a', 'ldap://b', 'ldap://c']);
    order.failed('ldap://b');
    order.answered('ldap://b');
    expect(order.inOrder()).toEqual(['ldap://a', 'ldap://b', 'ldap://c']);
  });
});

describe("the service account's bind", () => {
  it('backs off after repeated refusals, doubling, and clears on success', () => {
    let now = 0;
    const guard = createServiceBindGuard({
      freeFailures: 2,
      firstPauseSeconds: 30,
      maxPauseSeconds: 100,
      now: () => now,
    });
    expect([guard.failed(), guard.failed()]).toEqual([0, 0]);
    expect(guard.mayBind()).toBe(true);
    expect(guard.failed()).toBe(30);
    expect(guard.mayBind()).toBe(false);
    now = 30_000;
    expect(guard.mayBind()).toBe(true);
    expect(guard.failed()).toBe(60);
    now = 60_000;
    expect(guard.failed()).toBe(100);
    guard.succeeded();
    expect(guard.mayBind()).toBe(true);
    expect(guard.failed()).toBe(0);
  });
});

describe('start-up', () => {
  it('names every directory mistake on its own line, with the other settings still checked', () => {
    expect(() => testConfig({ LDAP_URL: 'ldap://ldap.example.test' })).toThrow(
      new ConfigError(
        [
          'LDAP_BIND_DN is required when LDAP_URL is set (the service account that searches)',
          'LDAP_BIND_PASSWORD is required when LDAP_URL is set (or LDAP_BIND_PASSWORD_FILE)',
          'LDAP_USER_BASE_DN is required when LDAP_URL is set (where users are searched)',
        ].join('\n'),
      ),
    );
  });

  it('reads LDAP_BIND_PASSWORD_FILE, and has no directory without LDAP_URL', () => {
    const folder = mkdtempSync(join(tmpdir(), 'ldap-secret-'));
    writeFileSync(join(folder, 'bind'), 'from-a-file\n');
    const config = testConfig({
      ...complete,
      LDAP_BIND_PASSWORD: '',
      LDAP_BIND_PASSWORD_FILE: join(folder, 'bind'),
    });
    expect(config.directory?.bindPassword).toBe('from-a-file');
    expect(testConfig().directory).toBeNull();
  });
});

describe('nothing LDAP is loaded without LDAP_URL', () => {
  const sourceRoot = join(import.meta.dirname, '..', 'src');
  const sources = readdirSync(sourceRoot, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({
      file: file.replaceAll('\\', '/'),
      text: readFileSync(join(sourceRoot, file), 'utf8'),
    }));
  /** Files with a value (not type-only) import statement whose specifier matches. */
  const staticImportOf = (specifier: RegExp) =>
    sources
      .filter(({ text }) =>
        [...text.matchAll(/^import (?!type )[^;]*?from '([^']+)';/gms)].some((match) =>
          specifier.test(match[1] ?? ''),
        ),
      )
      .map(({ file }) => file)
      .sort();

  it('ldapts is imported by the LDAP modules only, and those only dynamically from open-directory.ts', async () => {
    expect(staticImportOf(/^ldapts$/)).toEqual([
      'directory/groups.ts',
      'directory/ldap-directory.ts',
      'directory/traced-ldap-client.ts',
    ]);
    expect(staticImportOf(/\/(ldap-directory|groups|traced-ldap-client)\.js$/)).toEqual([
      'directory/ldap-directory.ts',
    ]);
    expect(await openDirectory(null, { warn: () => undefined })).toBeNull();
  });
});

describe('the documented settings (docs/directory-users.md)', () => {
  const readme = readFileSync(
    join(import.meta.dirname, '..', '..', '..', 'docs', 'directory-users.md'),
    'utf8',
  );
  /** The `KEY=value` lines of the first shell block under a heading, shell quotes removed. */
  function settingsUnder(heading: string): Record<string, string> {
    const section = readme.slice(readme.indexOf(`\n${heading}\n`));
    const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const settings: Record<string, string> = {};
    for (const line of block.split('\n')) {
      const match = /^([A-Z_]+)=(.*)$/.exec(line);
      if (match?.[1] && match[2] !== undefined) settings[match[1]] = match[2].replace(/^(['"])(.*)\1$/, '$2');
    }
    return settings;
  }
  const caFolder = mkdtempSync(join(tmpdir(), 'readme-ca-'));
  writeFileSync(join(caFolder, 'ca.pem'), '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
  /** The files the examples name stand for their contents: the secret, and a CA here. */
  function withFiles(settings: Record<string, string>): Record<string, string> {
    const { LDAP_BIND_PASSWORD_FILE: secretFile, LDAP_CA_FILE: caFile, ...rest } = settings;
    expect([secretFile, caFile]).toEqual([expect.any(String), expect.any(String)]);
    return { ...rest, LDAP_BIND_PASSWORD: 'from-the-file', LDAP_CA_FILE: join(caFolder, 'ca.pem') };
  }

  it('for OpenLDAP are accepted as they stand', () => {
    const { config, problems } = parseDirectoryConfig(withFiles(settingsUnder('## OpenLDAP')));
    expect(problems).toEqual([]);
    expect(config).toMatchObject({ urls: [expect.any(String), expect.any(String)], startTls: true });
  });

  it('for Active Directory are accepted as they stand: objectGUID, sAMAccountName, nested groups, disabled accounts', () => {
    const { config, problems } = parseDirectoryConfig(withFiles(settingsUnder('## Active Directory')));
    expect(problems).toEqual([]);
    expect(config).toMatchObject({
      bindDn: 'CN=svc-auth-server,OU=Service Accounts,DC=corp,DC=example,DC=com',
      matchingRuleInChain: true,
      enabledFilter: '(!(userAccountControl:1.2.840.113556.1.4.803:=2))',
      attributes: { id: 'objectGUID', username: 'sAMAccountName', kerberosPrincipal: 'userPrincipalName' },
    });
    expect(config?.userFilter).toContain('(sAMAccountName={username})');
  });
});
