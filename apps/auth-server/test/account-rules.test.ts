import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ACCOUNT_KINDS, accountKindOf } from '../src/accounts/account-kinds.js';
import {
  type AddressHolder,
  accountMailRecipient,
  addressOwner,
  mayVerifyAddress,
} from '../src/accounts/account-mail.js';
import { canonicalUsername } from '../src/accounts/canonical-username.js';

/**
 * The account rules as one table and a few pure functions (src/accounts/): which kind may do what,
 * which account an address belongs to and may receive which mail, and which names are one person.
 */

const holder = (sub: string, managedBy: AddressHolder['managedBy'], extra: Partial<AddressHolder> = {}) => ({
  sub,
  managedBy,
  emailVerified: false,
  emailSource: undefined,
  ...extra,
});

describe('the account-kind table', () => {
  it('gives a password, and so a reset, only to seed and local accounts', () => {
    expect(
      Object.entries(ACCOUNT_KINDS).map(([kind, rules]) => [
        kind,
        rules.localPassword,
        rules.receives.password_reset,
      ]),
    ).toEqual([
      ['seed', true, true],
      ['local', true, true],
      ['directory', false, false],
      ['federated', false, false],
    ]);
  });

  it('reads the kind from who keeps the row', () => {
    expect(['seed', 'operator', 'directory', 'federation'].map((by) => accountKindOf(by as never))).toEqual([
      'seed',
      'local',
      'directory',
      'federated',
    ]);
  });
});

describe('who receives account mail at an address', () => {
  it('the operator’s unverified address is the seed account’s own; a provider’s unverified claim is nobody’s', () => {
    const holders = [
      holder('f-mallory', 'federation', { emailSource: 'idp:plain' }),
      holder('u-dana', 'seed'),
    ];
    expect(accountMailRecipient(holders, 'password_reset')).toBe('u-dana');
  });

  it('a verified address belongs to its one account; an unverified holder never shadows it', () => {
    const holders = [holder('u-a', 'seed'), holder('u-b', 'operator', { emailVerified: true })];
    expect(accountMailRecipient(holders, 'password_reset')).toBe('u-b');
    expect(addressOwner(holders)?.sub).toBe('u-b');
  });

  it('no mail when the address is verified for a federated account, or for two accounts, or own to two', () => {
    expect(
      accountMailRecipient([holder('f', 'federation', { emailVerified: true })], 'password_reset'),
    ).toBeNull();
    expect(
      accountMailRecipient(
        [holder('a', 'seed', { emailVerified: true }), holder('b', 'seed', { emailVerified: true })],
        'password_reset',
      ),
    ).toBeNull();
    expect(accountMailRecipient([holder('a', 'seed'), holder('b', 'operator')], 'password_reset')).toBeNull();
  });

  it('a directory account gets a link proof at its verified address, never a reset', () => {
    const holders = [holder('d', 'directory', { emailVerified: true, emailSource: 'ldap' })];
    expect(accountMailRecipient(holders, 'upstream_link')).toBe('d');
    expect(accountMailRecipient(holders, 'password_reset')).toBeNull();
    expect(
      accountMailRecipient([holder('d', 'directory', { emailSource: 'ldap' })], 'upstream_link'),
    ).toBeNull();
  });

  it('an address filled by a provider’s unverified claim is not a seed account’s own', () => {
    expect(
      accountMailRecipient([holder('u', 'seed', { emailSource: 'idp:x' })], 'password_reset'),
    ).toBeNull();
  });
});

describe('who may have an address marked verified', () => {
  it('not an account when another has the address as its own; yes when only unverified claims hold it', () => {
    expect(mayVerifyAddress('f', [holder('u-alice', 'seed'), holder('f', 'federation')])).toBe(false);
    expect(mayVerifyAddress('f', [holder('m', 'federation', { emailSource: 'idp:x' })])).toBe(true);
    expect(mayVerifyAddress('u-alice', [holder('u-alice', 'seed')])).toBe(true);
  });
});

describe('the canonical username', () => {
  it('is trimmed, with runs of white space collapsed and case folded', () => {
    expect(['dana', ' Dana ', 'DANA', 'danA'].map(canonicalUsername)).toEqual([
      'dana',
      'dana',
      'dana',
      'dana',
    ]);
    expect(canonicalUsername('  Grace \t  Hopper ')).toBe('grace hopper');
    // NFKC: a full-width spelling is the same name.
    expect(canonicalUsername('ｄａｎａ')).toBe('dana');
  });
});

describe('SQL on the account tables', () => {
  const sourceRoot = join(import.meta.dirname, '..', 'src');
  const sources = readdirSync(sourceRoot, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => ({
      file: file.replaceAll('\\', '/'),
      text: readFileSync(join(sourceRoot, file), 'utf8'),
    }));
  const ACCOUNT_TABLES = new Set(['users', 'externalIdentities']);

  /** The account tables a file names from the schema: imported by name, or as `schema.users`. */
  function accountTablesNamedIn(text: string): string[] {
    const named = [...text.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*'[^']*\/schema\.js';/gm)]
      .flatMap((match) => (match[1] ?? '').split(','))
      .map(
        (name) =>
          name
            .replace(/^\s*type\s+/, '')
            .split(/\s+as\s+/)[0]
            ?.trim() ?? '',
      );
    const qualified = [...text.matchAll(/\bschema\.(users|externalIdentities)\b/g)].map(
      (match) => match[1] ?? '',
    );
    return [...named, ...qualified].filter((name) => ACCOUNT_TABLES.has(name));
  }

  it('reads its own imports: a named, aliased or type import of an account table counts', () => {
    expect(accountTablesNamedIn("import { clients, users as u } from '../db/schema.js';")).toEqual(['users']);
    expect(accountTablesNamedIn("import type {\n  externalIdentities,\n} from './schema.js';")).toEqual([
      'externalIdentities',
    ]);
    expect(accountTablesNamedIn("import { clients } from '../db/schema.js';")).toEqual([]);
  });

  it('lives in src/accounts/ alone: no other module names `users` or `external_identities`', () => {
    const outside = sources
      .filter(({ file }) => !file.startsWith('accounts/') && file !== 'db/schema.ts')
      .filter(({ text }) => accountTablesNamedIn(text).length > 0)
      .map(({ file }) => file)
      .sort();
    expect(outside).toEqual([]);
  });
});
