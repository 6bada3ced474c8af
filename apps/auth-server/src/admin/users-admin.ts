import { type Clock, hashPassword, type RandomSource } from '@oidc-orders/oauth-core';
import { and, count, eq, isNull } from 'drizzle-orm';
import { accountKindOf, rulesOf } from '../accounts/account-kinds.js';
import type { AccountRecord } from '../accounts/account-store.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { grants, ssoSessions } from '../db/schema.js';
import type { UserSignOut } from '../logout/user-sign-out.js';
import type { PasswordRecovery } from '../mail/password-reset.js';
import { createPasskeyRepository } from '../mfa/passkey-repository.js';
import { createRecoveryCodeRepository } from '../mfa/recovery-codes.js';
import { createTotpRepository } from '../mfa/totp-repository.js';
import { setEntryDisabled } from '../storage/drizzle/registry-status.js';
import type { AdminAuditRecorder } from './admin-audit.js';
import { AdminActionRefusedError, AdminNotFoundError } from './admin-errors.js';
import { createUserChanges } from './user-changes.js';
import {
  linkedIdentitiesOf,
  searchUsers,
  summaryOf,
  type UserDetail,
  type UserSearch,
} from './user-search.js';

export type { LinkedIdentity, UserDetail, UserSearch, UserSearchPage, UserSummary } from './user-search.js';

/**
 * User administration on a running deployment's database (`pnpm --filter auth-server users …`).
 * Every instance reads users, sessions and grants from the database on each request, so a change
 * here takes effect at once everywhere, without a restart.
 */
export interface UsersAdminDeps {
  db: AppDatabase;
  keyEncryptionKey: Uint8Array;
  clock: Clock;
  random: RandomSource;
  issuer: string;
  /** Ends sessions (with back-channel logout to their relying parties) and revokes grants. */
  signOut: Pick<UserSignOut, 'endUserSessions'>;
  /**
   * Writes the audit event of each change made through the `…BySub` operations (the admin API and
   * console); the `users` command writes its own lines.
   */
  audit?: AdminAuditRecorder;
  /** Mails reset links; `null` or absent when mail is off. */
  passwordRecovery?: Pick<PasswordRecovery, 'sendResetLinkTo'> | null;
}

export interface UserOverview {
  sub: string;
  username: string;
  name: string | null;
  email: string | null;
  /** The user proved the address (a mailed link, or the seed's `email_verified`). */
  emailVerified: boolean;
  mfaRequired: boolean;
  /** `seed`: the seed file names the user (or did); `operator`: `users add` (see accounts/drizzle/user-ownership.ts). */
  managedBy: 'seed' | 'operator' | 'directory' | 'federation';
  /** Disabled by `users disable` or by the seed file no longer naming the user. */
  disabled: boolean;
  authenticatorApps: number;
  passkeys: number;
  recoveryCodesRemaining: number;
  activeSessions: number;
  activeGrants: number;
}

/** `reset-password` of a directory user: the password is changed in the directory, not here. */
export class DirectoryManagedUserError extends Error {
  constructor(username: string) {
    super(`${username} is a directory user: change the password in the directory`);
  }
}

/** `reset-password` of an account without a local password (federated): it signs in elsewhere. */
export class NoLocalPasswordError extends Error {
  constructor(username: string) {
    super(`${username} has no password here: it signs in through its provider`);
    this.name = 'NoLocalPasswordError';
  }
}

export class UserNotFoundError extends Error {
  constructor(username: string) {
    super(`no user named ${JSON.stringify(username)}`);
    this.name = 'UserNotFoundError';
  }
}

export function createUsersAdmin(deps: UsersAdminDeps) {
  const { db, clock } = deps;
  const totp = createTotpRepository(deps);
  const recoveryCodes = createRecoveryCodeRepository(deps);
  const passkeys = createPasskeyRepository(deps);
  const accounts = createDrizzleAccountStore(db);

  async function find(username: string) {
    const row = await accounts.findAccountByUsername(username);
    if (!row) throw new UserNotFoundError(username);
    return row;
  }

  async function overview(row: AccountRecord): Promise<UserOverview> {
    const [sessions] = await db
      .select({ value: count() })
      .from(ssoSessions)
      .where(eq(ssoSessions.sub, row.sub));
    const [liveGrants] = await db
      .select({ value: count() })
      .from(grants)
      .where(and(eq(grants.sub, row.sub), isNull(grants.revokedAt)));
    return {
      sub: row.sub,
      username: row.username,
      name: row.name,
      email: row.email,
      emailVerified: row.emailVerified,
      mfaRequired: row.mfaRequired,
      managedBy: row.managedBy,
      disabled: row.disabledAt !== null,
      authenticatorApps: (await totp.list(row.sub)).length,
      passkeys: (await passkeys.list(row.sub)).length,
      recoveryCodesRemaining: await recoveryCodes.remaining(row.sub),
      activeSessions: sessions?.value ?? 0,
      activeGrants: liveGrants?.value ?? 0,
    };
  }

  /**
   * Ends every SSO session of the user, telling their relying parties over the back channel, and
   * revokes every grant (refresh and opaque access tokens).
   */
  const endEverything = (sub: string) => deps.signOut.endUserSessions(sub);

  async function findBySub(sub: string): Promise<AccountRecord> {
    const row = await accounts.findAccount(sub);
    if (!row) throw new AdminNotFoundError('user', sub);
    return row;
  }

  const record: AdminAuditRecorder = (event, fields) => deps.audit?.(event, fields);

  async function detail(sub: string): Promise<UserDetail> {
    const row = await findBySub(sub);
    const counts = await overview(row);
    return {
      ...summaryOf(row),
      emailVerified: row.emailVerified,
      mfaRequired: row.mfaRequired,
      groups: row.groups,
      factors: {
        authenticatorApps: await totp.list(sub),
        passkeys: (await passkeys.list(sub)).map(({ id, name, createdAt, lastUsedAt }) => ({
          id,
          name,
          createdAt,
          lastUsedAt,
        })),
        recoveryCodesRemaining: counts.recoveryCodesRemaining,
      },
      linkedIdentities: await linkedIdentitiesOf(db, sub),
      activeSessions: counts.activeSessions,
      activeGrants: counts.activeGrants,
    };
  }

  async function disableBySub(sub: string) {
    const row = await findBySub(sub);
    const changed = await setEntryDisabled(db, 'users', sub, clock.nowSeconds());
    const ended = await endEverything(sub);
    return { sub, kind: accountKindOf(row.managedBy), changed, ...ended };
  }

  async function enableBySub(sub: string) {
    await findBySub(sub);
    return { sub, changed: await setEntryDisabled(db, 'users', sub, null) };
  }

  async function resetMfaBySub(sub: string) {
    await findBySub(sub);
    return {
      sub,
      authenticatorApps: await totp.removeAll(sub),
      passkeys: await passkeys.removeAll(sub),
      recoveryCodes: await recoveryCodes.removeAll(sub),
      ...(await endEverything(sub)),
    };
  }

  /** The reset mail as `users send-reset` sends it: only to an address that is the account's own. */
  async function sendResetMailBySub(sub: string) {
    await findBySub(sub);
    if (!deps.passwordRecovery) throw new AdminActionRefusedError('mail_off', 'mail is off (no SMTP_URL)');
    const outcome = await deps.passwordRecovery.sendResetLinkTo(sub);
    if (outcome.sent) return { sub };
    const reason = outcome.reason;
    if (reason === 'no_email' || reason === 'no_local_password') {
      throw new AdminActionRefusedError(
        reason,
        reason === 'no_email'
          ? 'the user has no e-mail address of their own'
          : 'the user has no password here (a directory or federated account)',
      );
    }
    throw new AdminActionRefusedError('mail_failed', `the mail was not sent (${reason})`);
  }

  const changes = createUserChanges(
    { findBySub, disableBySub, enableBySub, resetMfaBySub, sendResetMailBySub, endEverything },
    record,
  );

  return {
    async list(): Promise<UserOverview[]> {
      return Promise.all((await accounts.listAccounts()).map(overview));
    },

    async show(username: string): Promise<UserOverview> {
      return overview(await find(username));
    },

    async add(input: { username: string; sub: string; password: string; name?: string; email?: string }) {
      const account = {
        sub: input.sub,
        username: input.username,
        passwordHash: await hashPassword(input.password),
        name: input.name ?? null,
        email: input.email ?? null,
      };
      // The operator's user (kind `local`): the seed file does not name it and leaves it alone.
      await accounts.addLocalAccount(account, clock.nowSeconds());
      return overview(await find(input.username));
    },

    /**
     * The user cannot sign in (every lookup skips a disabled user, src/storage/drizzle/registry-status.ts),
     * and their sessions end and grants are revoked now: refresh and opaque access tokens stop at
     * once on every instance. Returns whether the user was enabled before.
     */
    async disable(username: string) {
      const row = await find(username);
      const changed = await setEntryDisabled(db, 'users', row.sub, clock.nowSeconds());
      const kind = accountKindOf(row.managedBy);
      return { sub: row.sub, kind, changed, ...(await endEverything(row.sub)) };
    },

    async enable(username: string) {
      const row = await find(username);
      return { sub: row.sub, changed: await setEntryDisabled(db, 'users', row.sub, null) };
    },

    /** A new password; the user's sessions and grants end (whoever knew the old one is out). */
    async resetPassword(username: string, password: string) {
      const row = await find(username);
      // Only a kind with a local password has one to reset (src/accounts/account-kinds.ts): a
      // directory user's lives in the directory (README "Directory users"), a federated user has none.
      if (row.managedBy === 'directory') throw new DirectoryManagedUserError(username);
      if (!rulesOf(row.managedBy).localPassword) throw new NoLocalPasswordError(username);
      await accounts.setPassword(row.sub, await hashPassword(password), clock.nowSeconds());
      return { sub: row.sub, ...(await endEverything(row.sub)) };
    },

    /**
     * Removes every authenticator app, passkey and recovery code; the next sign-in asks for a new
     * factor if one is required. The sessions end and grants are revoked too: a factor is reset
     * because it was lost or taken, and the sessions it completed must not outlive it.
     */
    async resetMfa(username: string) {
      const row = await find(username);
      return {
        sub: row.sub,
        authenticatorApps: await totp.removeAll(row.sub),
        passkeys: await passkeys.removeAll(row.sub),
        recoveryCodes: await recoveryCodes.removeAll(row.sub),
        ...(await endEverything(row.sub)),
      };
    },

    endEverything,
    find,
    findBySub,
    search: (query: UserSearch) => searchUsers(db, query),
    detail,
    changes,
  };
}

export type UsersAdmin = ReturnType<typeof createUsersAdmin>;
