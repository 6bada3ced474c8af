import type { FastifyInstance, FastifyReply } from 'fastify';
import { directoryLoginAccountId } from '../../../accounts/login-accounts.js';
import { AUDIT_EVENTS, audit } from '../../../audit.js';
import type { DirectorySignIn, DirectorySignInOutcome } from '../../../directory/directory-sign-in.js';
import { interactionPagePath } from '../../../endpoints.js';
import type { MessageKey } from '../../../i18n/catalogues/en.js';
import { csrfTokenFor } from '../../../interaction/csrf.js';
import type { LoginAttemptDecision, LoginAttemptGuard } from '../../../interaction/login-attempts.js';
import { renderDirectoryPasswordPage } from '../../../pages/directory-password.js';
import { sendHtml } from '../../../pages/respond.js';
import { type InteractionRequest, type LoadedInteraction, stringField } from '../steps.js';
import type { PasswordAttempt, PasswordOutcome, PasswordVerifier } from './password-verifiers.js';
import type { InteractionArea } from './types.js';

/**
 * Directory users on the login form (README "Directory users", "Sign-in"): each answer of the
 * bind becomes its own page and status instead of one "invalid credentials", an expired or
 * must-change password leads to the change-password step when the directory allows it, and a
 * directory that does not answer says so (503) while the same page still signs in local users.
 */

export const DIRECTORY_UNAVAILABLE_MESSAGE =
  'The directory is not reachable, so directory accounts cannot sign in right now. Please try again in a few minutes.';
export const DIRECTORY_LOCKED_MESSAGE =
  'Your directory account is locked after too many failed attempts. Try again later, or ask your administrator to unlock it.';
export const DIRECTORY_DISABLED_MESSAGE =
  'Your directory account is disabled or has expired. Contact your administrator.';
export const DIRECTORY_NOT_NOW_MESSAGE = 'Your directory account may not sign in at this time.';
export const DIRECTORY_NOT_HERE_MESSAGE = 'Your directory account may not sign in from this workstation.';
export const DIRECTORY_PASSWORD_EXPIRED_MESSAGE =
  'Your directory password has expired and cannot be changed here. Contact your administrator to set a new one.';

/** What follows an answer of the bind: the session, the login page again, or the change step. */
type DirectoryStep =
  | { next: 'sign_in' }
  | ({
      next: 'login_page';
      status: number;
      reason: string;
      /** A wrong password: counted against the limits, with the last-attempt warning. */
      failure?: true;
      retryAfterSeconds?: number;
      /** The page's words: a catalogue message in the page's language, or (not yet translated) English text. */
    } & ({ message: string } | { messageKey: MessageKey }))
  | { next: 'change_password'; change: 'expired' | 'must_change'; reason: string };

/**
 * Every answer of the bind (directory/types.ts `DirectoryBindOutcome`, then the local record):
 * its status, page, audit reason and next step, in one table.
 */
const DIRECTORY_ANSWERS = {
  ok: { next: 'sign_in' },
  // draft-behera-ldap-password-policy §5.2.2.1: the password has expired and this bind used one of
  // the grace logins that exist so the person can change it: the change comes first.
  password_expired_grace: {
    next: 'change_password',
    change: 'expired',
    reason: 'directory_password_expired_grace',
  },
  // The directory accepted the password, but an operator disabled the local record.
  disabled_here: {
    next: 'login_page',
    status: 403,
    reason: 'user_disabled',
    message: DIRECTORY_DISABLED_MESSAGE,
  },
  invalid_credentials: {
    next: 'login_page',
    status: 401,
    reason: 'directory_invalid_credentials',
    // The same words as a wrong local password: the page does not tell which kind of account it is.
    messageKey: 'login.invalidCredentials',
    failure: true,
  },
  not_permitted_time: {
    next: 'login_page',
    status: 403,
    reason: 'directory_not_permitted_time',
    message: DIRECTORY_NOT_NOW_MESSAGE,
  },
  not_permitted_workstation: {
    next: 'login_page',
    status: 403,
    reason: 'directory_not_permitted_workstation',
    message: DIRECTORY_NOT_HERE_MESSAGE,
  },
  password_expired: { next: 'change_password', change: 'expired', reason: 'directory_password_expired' },
  password_expired_unchangeable: {
    next: 'login_page',
    status: 403,
    reason: 'directory_password_expired',
    message: DIRECTORY_PASSWORD_EXPIRED_MESSAGE,
  },
  must_change_password: {
    next: 'change_password',
    change: 'must_change',
    reason: 'directory_must_change_password',
  },
  must_change_password_unchangeable: {
    next: 'login_page',
    status: 403,
    reason: 'directory_must_change_password',
    message: DIRECTORY_PASSWORD_EXPIRED_MESSAGE,
  },
  account_locked: {
    next: 'login_page',
    status: 423,
    reason: 'directory_account_locked',
    message: DIRECTORY_LOCKED_MESSAGE,
  },
  account_disabled: {
    next: 'login_page',
    status: 403,
    reason: 'directory_account_disabled',
    message: DIRECTORY_DISABLED_MESSAGE,
  },
  account_expired: {
    next: 'login_page',
    status: 403,
    reason: 'directory_account_expired',
    message: DIRECTORY_DISABLED_MESSAGE,
  },
  // RFC 9110 §10.2.3: a 503 says when to come back.
  unavailable: {
    next: 'login_page',
    status: 503,
    reason: 'directory_unavailable',
    message: DIRECTORY_UNAVAILABLE_MESSAGE,
    retryAfterSeconds: 30,
  },
} as const satisfies Record<string, DirectoryStep>;

type DirectoryAnswer = keyof typeof DIRECTORY_ANSWERS;

/** The row of the table for one answer of the directory. */
function answerOf(outcome: DirectorySignInOutcome): DirectoryAnswer {
  switch (outcome.kind) {
    case 'ok':
      if (outcome.graceLoginsLeft !== undefined) return 'password_expired_grace';
      return outcome.user === null ? 'disabled_here' : 'ok';
    case 'not_permitted':
      return `not_permitted_${outcome.reason}`;
    case 'password_expired':
    case 'must_change_password':
      return outcome.canChange ? outcome.kind : `${outcome.kind}_unchangeable`;
    default:
      return outcome.kind;
  }
}

/** Every directory event names the method and the source. */
const DIRECTORY_AUDIT = { method: 'password', source: 'ldap' } as const;

/** The username and password checked by a bind, and the answer as a `PasswordOutcome`. */
export async function verifyWithDirectory(
  directory: DirectorySignIn,
  attempt: Omit<PasswordAttempt, 'localUser'>,
  guard: LoginAttemptGuard | undefined,
): Promise<PasswordOutcome> {
  const { username, ip } = attempt;
  const outcome = await directory.authenticate(username, attempt.password);
  const step: DirectoryStep = DIRECTORY_ANSWERS[answerOf(outcome)];
  if (step.next === 'change_password') {
    const graceLoginsLeft = outcome.kind === 'ok' ? outcome.graceLoginsLeft : undefined;
    return {
      kind: 'change_password',
      reason: step.change,
      ...(graceLoginsLeft === undefined ? {} : { graceLoginsLeft }),
      auditReason: step.reason,
      audit: DIRECTORY_AUDIT,
    };
  }
  if (step.next === 'login_page') {
    // The entry is known: the failure counts on its own lock too, whatever name found it.
    if (outcome.kind === 'invalid_credentials' && outcome.stableId !== undefined)
      await guard?.allowAccount({ ip, username }, directoryLoginAccountId(outcome.stableId));
    const { status, reason } = step;
    const message = 'messageKey' in step ? attempt.language.text(step.messageKey) : step.message;
    const retry = 'retryAfterSeconds' in step ? { retryAfterSeconds: step.retryAfterSeconds } : {};
    const failure = 'failure' in step && step.failure === true;
    return { kind: 'refused', status, reason, message, failure, ...retry, audit: DIRECTORY_AUDIT };
  }
  if (outcome.kind !== 'ok' || outcome.user === null) throw new Error('directory sign-in without a user');
  // The right password of a locked account is refused too: the lock is the person's, not the name's.
  const decision = (await guard?.allowAccount({ ip, username }, outcome.accountId)) ?? { allowed: true };
  if (!decision.allowed) return { kind: 'locked', decision };
  return { kind: 'verified', user: outcome.user, accountId: outcome.accountId, audit: DIRECTORY_AUDIT };
}

/**
 * Local users first; any other username (and a directory user's own local record) asks the
 * directory (directory/directory-sign-in.ts `handles`).
 */
export function directoryPasswordVerifier(directory: DirectorySignIn): PasswordVerifier {
  return {
    name: 'directory',
    async verify(attempt, guard) {
      if (attempt.username === '' || !directory.handles(attempt.localUser)) return null;
      return verifyWithDirectory(directory, attempt, guard);
    },
  };
}

/** The change-password step's page (its form posts the current and the new password). */
export function sendPasswordChangePage(
  area: InteractionArea,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  change: { username: string; reason: 'expired' | 'must_change'; graceLoginsLeft?: number | undefined },
  status: number,
  errorMessage?: string,
): FastifyReply {
  const page = renderDirectoryPasswordPage({
    graceLoginsLeft: change.graceLoginsLeft,
    csrfToken: csrfTokenFor(loaded.browserKey, 'directory-password', loaded.interaction.id),
    action: area.steps.pageUrl(loaded.interaction, 'directory-password'),
    username: change.username,
    reason: change.reason,
    basePath: area.pageContext.basePath,
    errorMessage,
  });
  return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
}

/** Answers an outcome of the password chain (./password.ts), as after the login form. */
export type PasswordOutcomeAnswer = (
  request: InteractionRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  username: string,
  outcome: PasswordOutcome,
  limit: LoginAttemptDecision,
) => Promise<FastifyReply>;

/**
 * The change-password step: the directory changes the password with the current one (its own
 * policy decides), then the sign-in goes on with the new password as from the login form. Counted
 * by the login rate limits like the login form, since it checks a password too.
 */
export function registerDirectoryPasswordChange(
  app: FastifyInstance,
  area: InteractionArea,
  directory: DirectorySignIn,
  answer: PasswordOutcomeAnswer,
): void {
  const { steps, loginAttemptGuard: guard } = area;
  app.get<{ Params: { id: string } }>(
    interactionPagePath('directory-password'),
    { config: { interaction: {} } },
    async (request, reply) => steps.redirectToPage(reply, steps.loaded(request), 'login'),
  );
  app.post<{ Params: { id: string } }>(
    interactionPagePath('directory-password'),
    { config: { interaction: { csrf: 'directory-password' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const field = (name: string) => stringField(request.body, name) ?? '';
      const username = field('username');
      const reason = field('reason') === 'must_change' ? 'must_change' : 'expired';
      const limit = guard ? await guard.allow({ ip: request.ip, username }) : ({ allowed: true } as const);
      if (!limit.allowed) {
        reply.header('retry-after', String(limit.retryAfterSeconds));
        return area.showLoginPage(
          reply,
          loaded,
          429,
          'Too many failed sign-in attempts. Please try again later.',
          username,
        );
      }
      const showStepAgain = (status: number, message: string) =>
        sendPasswordChangePage(area, reply, loaded, { username, reason }, status, message);
      if (field('new_password') === '' || field('new_password') !== field('confirm_password')) {
        return showStepAgain(400, 'The new passwords do not match.');
      }
      const changed = await directory.changePassword(
        username,
        field('current_password'),
        field('new_password'),
      );
      if (changed.kind === 'unavailable') {
        reply.header('retry-after', '30');
        return showStepAgain(503, DIRECTORY_UNAVAILABLE_MESSAGE);
      }
      if (changed.kind === 'refused') {
        if (changed.reason === 'invalid_credentials')
          await guard?.recordFailure({ ip: request.ip, username });
        const message =
          changed.reason === 'invalid_credentials'
            ? 'The current password is not correct.'
            : `The directory refused the new password${changed.message ? `: ${changed.message}` : '.'}`;
        return showStepAgain(changed.reason === 'invalid_credentials' ? 401 : 400, message);
      }
      audit(request.log, AUDIT_EVENTS.directoryPasswordChanged, {
        client_id: loaded.purpose.client.clientId,
        ip: request.ip,
        source: 'ldap',
      });
      const attempt = {
        username,
        password: field('new_password'),
        ip: request.ip,
        language: request.language,
      };
      return answer(
        request,
        reply,
        loaded,
        username,
        await verifyWithDirectory(directory, attempt, guard),
        limit,
      );
    },
  );
}
