import { describe, expect, it } from 'vitest';
import { CLAIMS_BY_SCOPE, consentedResourceClaims, scopedUserClaims } from '../src/claims.js';
import { makeUser } from './fixtures.js';

const alice = makeUser();

describe('claims released by scope (OpenID Connect Core §5.4)', () => {
  it('one table: profile → name; email → email, email_verified; groups → groups', () => {
    expect(CLAIMS_BY_SCOPE).toEqual({
      profile: ['name'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    });
    expect(scopedUserClaims(alice, ['openid', 'profile', 'email'])).toEqual({
      name: alice.name,
      email: alice.email,
      email_verified: alice.emailVerified,
    });
    expect(scopedUserClaims(alice, ['openid', 'orders.read'])).toEqual({});
  });
});

describe('the groups claim', () => {
  it("carries a directory user's group names with the groups scope, and is absent for a user without groups", () => {
    const directoryUser = makeUser({ groups: ['staff', 'admins'] });
    expect(scopedUserClaims(directoryUser, ['openid', 'groups'])).toEqual({ groups: ['staff', 'admins'] });
    expect(scopedUserClaims(directoryUser, ['openid', 'profile'])).toEqual({ name: directoryUser.name });
    expect(scopedUserClaims(alice, ['openid', 'groups'])).toEqual({});
  });

  it('reaches a resource listing groups in its claims only with the groups scope', () => {
    const directoryUser = makeUser({ groups: ['staff'] });
    expect(consentedResourceClaims(directoryUser, ['groups'], ['openid', 'groups', 'orders.read'])).toEqual({
      groups: ['staff'],
    });
    expect(consentedResourceClaims(directoryUser, ['groups'], ['openid', 'orders.read'])).toEqual({});
  });
});

// A resource's claims reach its access tokens only within consent.
describe('consentedResourceClaims', () => {
  const every = ['email', 'email_verified', 'name', 'preferred_username', 'username', 'sub'];
  it.each([
    ['openid orders.read: nothing', ['openid', 'orders.read'], {}],
    [
      'email scope: email and email_verified',
      ['openid', 'email'],
      { email: alice.email, email_verified: true },
    ],
    [
      'profile scope: name and the username claims',
      ['profile'],
      { name: alice.name, preferred_username: alice.username, username: alice.username },
    ],
    [
      'both',
      ['email', 'profile', 'orders.read'],
      {
        email: alice.email,
        email_verified: true,
        name: alice.name,
        preferred_username: alice.username,
        username: alice.username,
      },
    ],
    ['offline_access covers nothing', ['offline_access'], {}],
  ])('%s', (_name, scopes, expected) => {
    expect(consentedResourceClaims(alice, every, scopes)).toEqual(expected);
  });

  it('copies only what the resource asks for, even when consented', () => {
    expect(consentedResourceClaims(alice, ['email'], ['email', 'profile'])).toEqual({ email: alice.email });
  });
});
