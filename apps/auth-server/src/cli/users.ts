import { randomUUID } from 'node:crypto';
import { systemClock, systemRandom } from '@oidc-orders/oauth-core';
import { PgliteDirectoryInUseError } from '@oidc-orders/service-kit';
import type { FastifyBaseLogger } from 'fastify';
import { passwordProblem } from '../account/common-passwords.js';
import { ACCOUNT_KINDS, accountKindOf } from '../accounts/account-kinds.js';
import {
  createUsersAdmin,
  DirectoryManagedUserError,
  NoLocalPasswordError,
  UserNotFoundError,
  type UserOverview,
} from '../admin/users-admin.js';
import { commandAuditEvents } from '../audit/command-audit-events.js';
import { AUDIT_EVENTS, type AuditEvent, type AuditFields } from '../audit.js';
import { type AppConfig, ConfigError, loadConfig } from '../config.js';
import { type AppDatabase, openDatabase } from '../db/client.js';
import { openDirectory } from '../directory/open-directory.js';
import { KeyDecryptionError } from '../keys/key-encryption.js';
import { KeyRing } from '../keys/key-ring.js';
import {
  type BackchannelLogoutSender,
  createBackchannelLogoutSender,
  DEFAULT_BACKCHANNEL_LOGOUT_OPTIONS,
} from '../logout/backchannel-sender.js';
import { createUserSignOut, type UserSignOut } from '../logout/user-sign-out.js';
import { createMailer } from '../mail/mailer.js';
import { createPasswordRecovery, DEFAULT_MAIL_RATE_LIMITS } from '../mail/password-reset.js';
import { createDrizzleStores, createKeyStore } from '../storage/drizzle/stores.js';
import { commandEnvironment } from './command-environment.js';
import { readStdin } from './stdin.js';
import { DIRECTORY_USAGE, DirectoryCommandError, runDirectoryCommand } from './users-directory.js';

/**
 * Operator commands: `pnpm --filter auth-server users <command>`, against DATABASE_URL while the
 * server runs (without DATABASE_URL: the `pnpm dev` database, see command-environment.ts).
 * Passwords are read from standard input, never from arguments (`ps`, shell history).
 * What a command did goes to stdout; its audit event to stderr as a JSON log line, and to the
 * stored audit events the console reads (src/audit/command-audit-events.ts).
 */
const USAGE = `usage: users <command>
  list                                  every user, with factors, sessions and grants
  show <username>                       one user
  add <username> [--sub S] [--name N] [--email E]  < password
                                        a new user (sub defaults to a random UUID)
  disable <username>                    the user cannot sign in; sessions, refresh and access tokens stop now
  enable <username>                     the user can sign in again
  reset-password <username>  < password a new password; the user's sessions and tokens end
  send-reset <username>                 mails the user a password reset link (SMTP_URL)
  reset-mfa <username>                  removes the user's authenticator apps, passkeys and recovery codes;
                                        the user's sessions and tokens end
${DIRECTORY_USAGE}
Ending sessions sends back-channel logout to their relying parties (and waits for the deliveries).`;

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index < 0 ? undefined : args[index + 1];
}

function describe(user: UserOverview): string {
  return [
    `${user.username}\tsub=${user.sub}`,
    `name=${user.name ?? '-'}`,
    `email=${user.email ?? '-'}`,
    `email_verified=${user.emailVerified}`,
    `apps=${user.authenticatorApps}`,
    `passkeys=${user.passkeys}`,
    `recovery_codes=${user.recoveryCodesRemaining}`,
    `mfa_required=${user.mfaRequired}`,
    `managed_by=${user.managedBy}`,
    // The account-kind table's name for it (src/accounts/account-kinds.ts).
    `kind=${accountKindOf(user.managedBy)}`,
    `disabled=${user.disabled}`,
    `sessions=${user.activeSessions}`,
    `grants=${user.activeGrants}`,
  ].join('\t');
}

async function newPassword(username: string): Promise<string> {
  const password = await readStdin();
  if (password === '') throw new ConfigError('no password on standard input');
  const problem = await passwordProblem(password, username);
  if (problem !== null) throw new ConfigError(problem);
  return password;
}

async function main(args: string[]): Promise<void> {
  const [command, username = '', ...rest] = args;
  if (command === undefined || command === 'help' || (command !== 'list' && username === '')) {
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = command === undefined || command === 'help' ? 0 : 1;
    return;
  }
  const config = loadConfig(
    commandEnvironment(process.env, (line) => process.stderr.write(`users: ${line}\n`)),
  );
  if (command === 'directory') return directoryCommand(config, [username, ...rest]);
  const database = await openDatabase(config.database);
  const backchannel = createBackchannelLogoutSender({
    ...DEFAULT_BACKCHANNEL_LOGOUT_OPTIONS,
    fetch: globalThis.fetch,
    log: { info: deliveryLine, warn: deliveryLine, error: deliveryLine },
  });
  try {
    await database.migrate();
    const signOut = await userSignOut(config, database.db, backchannel);
    const admin = createUsersAdmin({
      db: database.db,
      keyEncryptionKey: config.keyEncryptionKey,
      clock: systemClock,
      random: systemRandom,
      issuer: config.issuer,
      signOut,
    });
    const events = commandAuditEvents(database.db, (line) => process.stderr.write(`users: ${line}\n`));
    try {
      await run(
        admin,
        command,
        username,
        rest,
        (sub) => mailResetLink(config, database.db, signOut, sub),
        events.record,
      );
    } finally {
      await events.written();
    }
  } finally {
    // This process ended the sessions, so it tells their relying parties, retries included,
    // before it exits (OIDC Back-Channel Logout 1.0 §2.5).
    await backchannel.idle();
    await database.close();
  }
}

/** `users directory …`: asks the directory of LDAP_URL with the service account; no database needed. */
async function directoryCommand(config: AppConfig, args: string[]): Promise<void> {
  const directory = await openDirectory(config.directory, {
    warn: (fields, message) => process.stderr.write(`users: ${message} ${JSON.stringify(fields)}\n`),
  });
  if (directory === null) throw new ConfigError('no directory: set LDAP_URL (README "Directory users")');
  try {
    for (const line of await runDirectoryCommand(directory, args)) process.stdout.write(`${line}\n`);
  } finally {
    await directory.close();
  }
}

/** Ends sessions like a server instance: logout tokens signed with the deployment's keys. */
async function userSignOut(config: AppConfig, db: AppDatabase, backchannel: BackchannelLogoutSender) {
  const signer = await KeyRing.load(await createKeyStore(db).listSigningKeys(), config.keyEncryptionKey, {
    clock: systemClock,
    issuer: config.issuer,
  });
  const context = {
    stores: createDrizzleStores(db),
    signer,
    clock: systemClock,
    random: systemRandom,
    config: config.protocol,
  };
  return createUserSignOut({ db, context, backchannel });
}

/** A delivery's outcome as one line on stderr: client id, URI, status or reason; never the token. */
function deliveryLine(context: unknown, message?: unknown): void {
  const { clientId, uri, status, reason } = (context ?? {}) as Record<string, unknown>;
  const details = [
    clientId,
    uri,
    status === undefined ? undefined : `HTTP ${status}`,
    reason === undefined ? undefined : `(${reason})`,
  ].filter((detail) => detail !== undefined);
  process.stderr.write(`users: ${String(message)}: ${details.join(' ')}\n`);
}

/** A mail outcome as one line on stderr: what and why, never the link. */
function mailLine(context: unknown, message?: unknown): void {
  const { reason } = (context ?? {}) as Record<string, unknown>;
  process.stderr.write(`users: ${String(message)}${reason === undefined ? '' : ` (${String(reason)})`}\n`);
}

/** `send-reset`: a reset link mailed from this process, as the server would (SMTP_URL, MAIL_FROM). */
async function mailResetLink(config: AppConfig, db: AppDatabase, signOut: UserSignOut, sub: string) {
  const log = { info: mailLine, warn: mailLine, error: mailLine } as unknown as FastifyBaseLogger;
  const mailer = await createMailer(config.mail, log);
  if (!mailer) throw new ConfigError('mail is off: set SMTP_URL (README "Email")');
  try {
    const recovery = createPasswordRecovery({
      ...{ db, clock: systemClock, random: systemRandom, issuer: config.issuer },
      ...{ mailer, signOut, log, limits: DEFAULT_MAIL_RATE_LIMITS },
    });
    const outcome = await recovery.sendResetLinkTo(sub);
    if (outcome.sent) return;
    throw new ConfigError(
      outcome.reason === 'no_email'
        ? 'the user has no e-mail address of their own (verified, or given by an operator)'
        : outcome.reason === 'no_local_password'
          ? 'the user has no password here (a directory or federated account): nothing to reset'
          : `could not send the mail (${outcome.reason}); try again in a few minutes`,
    );
  } finally {
    await mailer.close();
  }
}

async function run(
  admin: ReturnType<typeof createUsersAdmin>,
  command: string,
  username: string,
  rest: string[],
  sendReset: (sub: string) => Promise<void>,
  record: (name: AuditEvent, fields: AuditFields) => void,
): Promise<void> {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const event = (name: AuditEvent, sub: string, count?: number) =>
    record(name, { sub, ...(count === undefined ? {} : { count }) });
  switch (command) {
    case 'list':
      for (const user of await admin.list()) out(describe(user));
      return;
    case 'show':
      out(describe(await admin.show(username)));
      return;
    case 'add': {
      const user = await admin.add({
        username,
        sub: option(rest, '--sub') ?? randomUUID(),
        password: await newPassword(username),
        name: option(rest, '--name'),
        email: option(rest, '--email'),
      });
      event(AUDIT_EVENTS.adminUserAdded, user.sub);
      out(`added ${describe(user)}`);
      return;
    }
    case 'disable': {
      const result = await admin.disable(username);
      event(AUDIT_EVENTS.adminUserDisabled, result.sub);
      out(
        `${result.changed ? 'disabled' : 'already disabled:'} ${username}; ended ${result.sessions} session(s), revoked ${result.grants} grant(s)`,
      );
      // What disabling means for this kind of account, from the one table that says it.
      process.stderr.write(`users: ${result.kind} account: ${ACCOUNT_KINDS[result.kind].disableMeans}\n`);
      return;
    }
    case 'enable': {
      const result = await admin.enable(username);
      event(AUDIT_EVENTS.adminUserEnabled, result.sub);
      out(`${result.changed ? 'enabled' : 'already enabled:'} ${username}`);
      return;
    }
    case 'reset-password': {
      const result = await admin.resetPassword(username, await newPassword(username));
      event(AUDIT_EVENTS.adminPasswordReset, result.sub);
      out(
        `password reset for ${username}; ended ${result.sessions} session(s), revoked ${result.grants} grant(s)`,
      );
      return;
    }
    case 'send-reset': {
      const user = await admin.show(username);
      await sendReset(user.sub);
      out(`reset link mailed to ${user.email} for ${username}`);
      return;
    }
    case 'reset-mfa': {
      const result = await admin.resetMfa(username);
      event(AUDIT_EVENTS.adminMfaReset, result.sub, result.authenticatorApps + result.passkeys);
      out(
        `removed ${result.authenticatorApps} authenticator app(s), ${result.passkeys} passkey(s) and ${result.recoveryCodes} recovery code(s) of ${username}; ended ${result.sessions} session(s), revoked ${result.grants} grant(s)`,
      );
      return;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      process.exitCode = 1;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known =
    error instanceof ConfigError ||
    error instanceof KeyDecryptionError ||
    error instanceof UserNotFoundError ||
    error instanceof DirectoryManagedUserError ||
    error instanceof NoLocalPasswordError ||
    error instanceof DirectoryCommandError ||
    error instanceof PgliteDirectoryInUseError;
  process.stderr.write(`users: ${known ? (error as Error).message : String(error)}\n`);
  process.exit(1);
});
