import { describe, expect, it } from 'vitest';
import {
  boundedGroups,
  MAX_GROUP_NAME_LENGTH,
  MAX_GROUPS,
  type OwnedProfile,
  type Profile,
  profileUpdateFrom,
} from '../src/accounts/claim-ownership.js';
import { validUpstreamAcr } from '../src/federation/upstream-assurance.js';

/** The pure rules behind the claims an upstream provider speaks for (src/accounts/claim-ownership.ts). */

describe('an upstream groups claim within safe bounds', () => {
  it.each([
    ['absent', undefined, null],
    ['not an array', 'staff', null],
    ['empty', [], []],
    ['non-strings and empty names dropped', ['a', 1, null, '', { b: 1 }, 'b'], ['a', 'b']],
    ['duplicates once', ['a', 'a', 'b'], ['a', 'b']],
    [
      'an over-long name dropped',
      ['x'.repeat(MAX_GROUP_NAME_LENGTH + 1), 'x'.repeat(MAX_GROUP_NAME_LENGTH)],
      ['x'.repeat(MAX_GROUP_NAME_LENGTH)],
    ],
  ] as const)('%s', (_name, value, expected) => {
    expect(boundedGroups(value)).toEqual(expected);
  });

  it(`keeps the first ${MAX_GROUPS} names`, () => {
    const many = Array.from({ length: MAX_GROUPS + 50 }, (_, index) => `g${index}`);
    expect(boundedGroups(many)).toEqual(many.slice(0, MAX_GROUPS));
  });
});

describe('an upstream acr', () => {
  it.each([
    'urn:mace:incommon:iap:silver',
    'http://idmanagement.gov/ns/assurance/loa/2',
    '1',
    'c2id.loa.hisec',
  ])('accepts %s', (value) => expect(validUpstreamAcr(value)).toBe(value));
  it.each([
    ['a number', 2],
    ['empty', ''],
    ['with spaces', 'loa 2'],
    ['markup', '<script>'],
    ['over 128 characters', `urn:${'a'.repeat(125)}`],
  ] as const)('refuses %s', (_name, value) => expect(validUpstreamAcr(value)).toBeNull());
});

describe('what a sign-in through a source writes', () => {
  const upstream: Profile = { name: 'Up', email: 'up@example.test', emailVerified: true, groups: ['g'] };
  const local: OwnedProfile = {
    name: 'Own',
    email: 'own@example.test',
    emailVerified: false,
    groups: null,
    claimSources: {},
    unrecordedOwnedBySource: false,
  };

  it('rewrites what the source owns, an absent value clearing it', () => {
    const owned = { ...local, claimSources: { name: 'idp:a', email: 'local', groups: 'idp:a' } };
    expect(profileUpdateFrom(owned, 'idp:a', { ...upstream, groups: null })).toEqual({
      values: { name: 'Up', groups: null },
      claimSources: { name: 'idp:a', email: 'local', groups: 'idp:a' },
    });
  });

  it('never touches what another source or the account owns; fills only what it lacks', () => {
    expect(profileUpdateFrom({ ...local, claimSources: { name: 'ldap' } }, 'idp:a', upstream)).toEqual({
      values: { groups: ['g'] },
      claimSources: { name: 'ldap', groups: 'idp:a' },
    });
    expect(profileUpdateFrom({ ...local, name: null }, 'idp:a', { ...upstream, name: null })).toEqual({
      values: { groups: ['g'] },
      claimSources: { groups: 'idp:a' },
    });
  });

  it('moves email and email_verified together', () => {
    const result = profileUpdateFrom({ ...local, email: null }, 'idp:a', upstream);
    expect(result.values).toMatchObject({ email: 'up@example.test', emailVerified: true });
    expect(result.claimSources.email).toBe('idp:a');
  });

  it('gives a federated user from before sources were recorded to the signing-in provider', () => {
    const legacy = { ...local, unrecordedOwnedBySource: true };
    expect(profileUpdateFrom(legacy, 'idp:a', upstream).values).toEqual({
      name: 'Up',
      email: 'up@example.test',
      emailVerified: true,
      groups: ['g'],
    });
  });
});
