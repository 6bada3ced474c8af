import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AccountStore, DirectoryAccountEntry } from '../../src/accounts/account-store.js';

/**
 * The contract of an AccountStore (src/accounts/account-store.ts), for every implementation: which
 * account an address belongs to and who may receive its mail, the rule for duplicates, and what a
 * directory or upstream sign-in writes. `context` gives a fresh store and a way to put a seed or
 * operator account in it (what the seed loader and `users add` write).
 */
export interface AccountStoreContext {
  store: AccountStore;
  addLocalAccount(account: {
    sub: string;
    managedBy: 'seed' | 'operator';
    email: string;
    emailVerified: boolean;
  }): Promise<void>;
  /** The stored `email_verified` of an account. */
  emailVerifiedOf(sub: string): Promise<boolean | undefined>;
}

const NOW = 1_800_000_000;
/** Names unique per test: the suite may share one database. */
const unique = (name: string) => `${name}-${randomUUID().slice(0, 8)}`;
const addressOf = (name: string) => `${unique(name)}@example.test`;

const profile = (email: string | null, emailVerified: boolean) => ({
  name: 'Upstream Name',
  email,
  emailVerified,
  groups: null,
});

const directoryEntry = (overrides: Partial<DirectoryAccountEntry> = {}): DirectoryAccountEntry => ({
  stableId: randomUUID(),
  username: unique('dir'),
  name: 'Directory Person',
  email: null,
  emailVerified: false,
  groups: ['staff'],
  ...overrides,
});

export function describeAccountStoreContract(name: string, contextOf: () => Promise<AccountStoreContext>) {
  describe(`AccountStore contract: ${name}`, () => {
    describe('addresses', () => {
      it('finds the holders of an address whatever its case, and gives account mail to the operator’s address only', async () => {
        const { store, addLocalAccount } = await contextOf();
        const email = addressOf('dana');
        const dana = unique('u-dana');
        await addLocalAccount({ sub: dana, managedBy: 'seed', email, emailVerified: false });
        const mallory = await store.signInFederated(
          'idp:x',
          unique('mallory'),
          profile(email.toUpperCase(), false),
          NOW,
        );
        expect((await store.addressHolders(email)).map((holder) => holder.sub).sort()).toEqual(
          [dana, mallory].sort(),
        );
        expect(await store.accountMailRecipient(email.toUpperCase(), 'password_reset')).toBe(dana);
        expect(await store.addressOwner(email)).toBe(dana);
      });

      it('gives no reset to an account without a local password, even at its verified address', async () => {
        const { store } = await contextOf();
        const email = addressOf('henry');
        const henry = await store.signInFederated('idp:x', unique('henry'), profile(email, true), NOW);
        expect(await store.addressOwner(email)).toBe(henry);
        expect(await store.accountMailRecipient(email, 'password_reset')).toBeNull();
        expect(await store.accountMailRecipient(email, 'upstream_link')).toBeNull();
      });

      it('a verified address belongs to one account: an upstream’s verification of another account’s address is not stored', async () => {
        const { store, addLocalAccount, emailVerifiedOf } = await contextOf();
        const email = addressOf('alice');
        const alice = unique('u-alice');
        await addLocalAccount({ sub: alice, managedBy: 'operator', email, emailVerified: true });
        const eve = await store.signInFederated('idp:x', unique('eve'), profile(email, true), NOW);
        expect(await emailVerifiedOf(eve)).toBe(false);
        expect(await store.mayVerifyAddress(eve, email)).toBe(false);
        expect(await store.mayVerifyAddress(alice, email)).toBe(true);
      });
    });

    describe('passwords and addresses', () => {
      it('sets a password only on an account with a local password, and only while it still has the one replaced', async () => {
        const { store, addLocalAccount } = await contextOf();
        const sub = unique('u-pat');
        await addLocalAccount({ sub, managedBy: 'seed', email: addressOf('pat'), emailVerified: false });
        expect(await store.setPassword(sub, 'scrypt$second', NOW, { replacing: 'scrypt$other' })).toBe(false);
        expect(await store.setPassword(sub, 'scrypt$second', NOW, { replacing: 'scrypt$placeholder' })).toBe(
          true,
        );
        expect((await store.findAccount(sub))?.passwordHash).toBe('scrypt$second');
        const federated = await store.signInFederated('idp:x', unique('nopass'), profile(null, false), NOW);
        expect(await store.setPassword(federated, 'scrypt$x', NOW)).toBe(false);
        expect((await store.findAccount(federated))?.passwordHash).not.toMatch(/^scrypt\$/);
      });

      it('a reset proves its address for its own account, never when another account has it as its own', async () => {
        const { store, addLocalAccount, emailVerifiedOf } = await contextOf();
        const [own, taken] = [addressOf('own'), addressOf('taken')];
        const [first, second] = [unique('u-first'), unique('u-second')];
        await addLocalAccount({ sub: first, managedBy: 'seed', email: own, emailVerified: false });
        await store.setPassword(first, 'scrypt$new', NOW, { provesAddress: own.toUpperCase() });
        expect(await emailVerifiedOf(first)).toBe(true);
        await addLocalAccount({ sub: second, managedBy: 'seed', email: taken, emailVerified: false });
        await addLocalAccount({
          sub: unique('u-owner'),
          managedBy: 'operator',
          email: taken,
          emailVerified: true,
        });
        await store.setPassword(second, 'scrypt$new', NOW, { provesAddress: taken });
        expect(await emailVerifiedOf(second)).toBe(false);
        expect(await store.markAddressVerified(second, taken, NOW)).toBe(false);
      });

      it('a proven new address becomes the person’s own, verified unless another account has it', async () => {
        const { store, addLocalAccount, emailVerifiedOf } = await contextOf();
        const sub = unique('u-quinn');
        await addLocalAccount({ sub, managedBy: 'operator', email: addressOf('old'), emailVerified: true });
        const fresh = addressOf('new');
        await store.setProvenAddress(sub, fresh, NOW);
        expect(await store.findAccount(sub)).toMatchObject({
          email: fresh,
          claimSources: { email: 'local' },
        });
        expect(await emailVerifiedOf(sub)).toBe(true);
        expect(await store.markAddressVerified(sub, addressOf('elsewhere'), NOW)).toBe(false);
      });
    });

    describe('language', () => {
      it('remembers the language of the last sign-in, for mails sent later', async () => {
        const { store, addLocalAccount } = await contextOf();
        const sub = unique('u-greta');
        await addLocalAccount({ sub, managedBy: 'seed', email: addressOf('greta'), emailVerified: false });
        expect((await store.findAccount(sub))?.locale).toBeNull();
        await store.recordLanguage(sub, 'de');
        expect((await store.findAccount(sub))?.locale).toBe('de');
        await store.recordLanguage(sub, 'ar');
        expect((await store.findAccount(sub))?.locale).toBe('ar');
      });
    });

    describe('external identities', () => {
      it('one identity enters one account: signing in again finds it, and a link never moves it', async () => {
        const { store, addLocalAccount } = await contextOf();
        const subject = unique('upstream');
        const sub = await store.signInFederated('idp:x', subject, profile(null, false), NOW);
        expect(await store.signInFederated('idp:x', subject, profile(null, false), NOW + 1)).toBe(sub);
        expect(await store.findLinkedSub('idp:x', subject)).toBe(sub);
        const other = unique('u-other');
        await addLocalAccount({
          sub: other,
          managedBy: 'seed',
          email: addressOf('other'),
          emailVerified: false,
        });
        expect(await store.linkIdentity('idp:x', subject, other, NOW, false)).toBe('linked_to_other');
        expect(await store.linkIdentity('idp:x', subject, sub, NOW, false)).toBe('already_linked');
        expect(await store.linkIdentity('idp:y', subject, other, NOW, false)).toBe('linked');
        expect(await store.findLinkedSub('idp:y', subject)).toBe(other);
        expect(await store.externalSubjectOf('idp:y', other)).toBe(subject);
      });

      it('unlinks an identity, but never the last way into an account without a password', async () => {
        const { store, addLocalAccount } = await contextOf();
        const federated = await store.signInFederated('idp:x', unique('only-way'), profile(null, false), NOW);
        expect(await store.unlinkIdentity(federated, 'idp:x')).toBe('last_way_in');
        expect(await store.unlinkIdentity(federated, 'idp:never-linked')).toBe('unknown');
        const withPassword = unique('u-pw');
        await addLocalAccount({
          sub: withPassword,
          managedBy: 'seed',
          email: addressOf('pw'),
          emailVerified: false,
        });
        const subject = unique('linked');
        await store.linkIdentity('idp:x', subject, withPassword, NOW, false);
        expect(await store.unlinkIdentity(withPassword, 'idp:x')).toBe('unlinked');
        expect(await store.findLinkedSub('idp:x', subject)).toBeNull();
      });

      it('two concurrent links of one identity: exactly one wins', async () => {
        const { store, addLocalAccount } = await contextOf();
        const [first, second] = [unique('u-first'), unique('u-second')];
        for (const sub of [first, second])
          await addLocalAccount({ sub, managedBy: 'seed', email: addressOf(sub), emailVerified: false });
        const subject = unique('raced');
        const outcomes = await Promise.all([
          store.linkIdentity('idp:x', subject, first, NOW, true),
          store.linkIdentity('idp:x', subject, second, NOW, true),
        ]);
        expect(outcomes.sort()).toEqual(['linked', 'linked_to_other']);
      });
    });

    describe('directory accounts', () => {
      it('are keyed by the entry’s stable id: a rename keeps the account; the name of a retired entry is freed', async () => {
        const { store } = await contextOf();
        const entry = directoryEntry();
        const first = await store.provisionDirectoryAccount(entry, NOW);
        expect(first).toMatchObject({ username: `ldap:${entry.username}` });
        const renamed = await store.provisionDirectoryAccount(
          { ...entry, username: unique('renamed') },
          NOW + 1,
        );
        expect(renamed?.sub).toBe(first?.sub);
        // A new entry (a new stable id) with the old name: a new person, and the name is theirs.
        const successor = await store.provisionDirectoryAccount(
          directoryEntry({ username: (renamed?.username ?? '').slice('ldap:'.length) }),
          NOW + 2,
        );
        expect(successor?.sub).not.toBe(first?.sub);
        expect(successor?.username).toBe(renamed?.username);
        expect(await store.externalSubjectOf('ldap', first!.sub)).toBe(entry.stableId);
      });

      it('have no local password and get no reset, but a link proof at their verified address', async () => {
        const { store } = await contextOf();
        const email = addressOf('dir');
        const user = await store.provisionDirectoryAccount(
          directoryEntry({ email, emailVerified: true }),
          NOW,
        );
        expect(user?.passwordHash).not.toMatch(/^scrypt\$/);
        expect(await store.accountMailRecipient(email, 'password_reset')).toBeNull();
        expect(await store.accountMailRecipient(email, 'upstream_link')).toBe(user?.sub);
      });
    });
  });
}
