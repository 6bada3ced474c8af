import { describe, expect, it } from 'vitest';
import type { AddressHolder } from '../src/accounts/account-mail.js';
import { decideUpstreamSignIn, type UpstreamArrival } from '../src/accounts/first-sign-in.js';

/** The first-sign-in decision for an upstream identity (src/accounts/first-sign-in.ts): a table of arrivals. */

const alice: AddressHolder = {
  sub: 'u-alice',
  managedBy: 'seed',
  emailVerified: true,
  emailSource: undefined,
};
const arrival = (overrides: Partial<UpstreamArrival> = {}): UpstreamArrival => ({
  subject: 'upstream-1',
  linkedSub: null,
  linkByVerifiedEmail: true,
  email: 'alice@example.test',
  emailVerified: true,
  holders: [alice],
  ...overrides,
});

describe('an upstream identity arriving', () => {
  it.each([
    ['without a stable subject is refused', { subject: null }, { kind: 'refuse', reason: 'no_subject' }],
    ['already linked signs its account in', { linkedSub: 'u-linked' }, { kind: 'sign_in', sub: 'u-linked' }],
    [
      'with a verified address another account owns is offered the link',
      {},
      { kind: 'offer_link', sub: 'u-alice' },
    ],
    [
      'at a provider not trusted to link by address gets a new account',
      { linkByVerifiedEmail: false },
      { kind: 'create' },
    ],
    [
      'whose address the upstream did not verify gets a new account',
      { emailVerified: false },
      { kind: 'create' },
    ],
    ['without an address gets a new account', { email: null }, { kind: 'create' }],
    ['whose address nobody holds gets a new account', { holders: [] }, { kind: 'create' }],
    [
      'whose address only a federated account holds gets a new account (no link to a federated account)',
      { holders: [{ ...alice, sub: 'f-1', managedBy: 'federation' as const, emailSource: 'idp:x' }] },
      { kind: 'create' },
    ],
    [
      'whose address two accounts have verified is linked to neither',
      { holders: [alice, { ...alice, sub: 'u-alias' }] },
      { kind: 'create' },
    ],
    [
      'whose address a directory account has verified is offered the link to it',
      {
        holders: [{ sub: 'd-1', managedBy: 'directory' as const, emailVerified: true, emailSource: 'ldap' }],
      },
      { kind: 'offer_link', sub: 'd-1' },
    ],
  ])('%s', (_title, overrides, expected) => {
    expect(decideUpstreamSignIn(arrival(overrides as Partial<UpstreamArrival>))).toEqual(expected);
  });
});
