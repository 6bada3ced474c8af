import type { User } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { directoryLoginAccountId } from '../../accounts/login-accounts.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import type { DirectorySignIn, DirectorySignInOutcome } from '../../directory/directory-sign-in.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { renderDirectoryPasswordPage } from '../../pages/directory-password.js';
import { sendHtml } from '../../pages/respond.js';
import {
  type InteractionRoutesOptions,
  type LoginAttemptDecision,
  lastAttemptWarning,
  tooManyAttemptsMessage,
} from './options.js';
import {
  type InteractionRequest,
  type InteractionSteps,
  type LoadedInteraction,
  stringField,
} from './steps.js';

/**
 * Directory users on the login form (README "Directory users", "Sign-in"): each answer of the
 * bind becomes its own page and status instead of one "invalid credentials", an expired or
 * must-change password leads to the change-password step when the directory allows it, and a
 * directory that does not answer says so (503) while the same page still signs in local users.
 */

/** Shows the login page again with `message` (the login route's own renderer). */
export type LoginPageSender = (
  reply: FastifyReply,
  loaded: LoadedInteraction,
  status: number,
  username: string,
  message: string,
) => Promise<FastifyReply>;

export interface DirectoryLoginContext {
  directorySignIn: DirectorySignIn;
  steps: InteractionSteps;
  options: InteractionRoutesOptions;
  sendLoginPage: LoginPageSender;
}

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

/** The refusal pages: status, audit reason and words for each bind outcome that is not a success. */
const REFUSALS = {
  account_locked: { status: 423, reason: 'directory_account_locked', message: DIRECTORY_LOCKED_MESSAGE },
  account_disabled: {
    status: 403,
    reason: 'directory_account_disabled',
    message: DIRECTORY_DISABLED_MESSAGE,
  },
  account_expired: { status: 403, reason: 'directory_account_expired', message: DIRECTORY_DISABLED_MESSAGE },
  unavailable: { status: 503, reason: 'directory_unavailable', message: DIRECTORY_UNAVAILABLE_MESSAGE },
} as const;

/** The login form's username and password, sent to the directory. */
export async function signInWithDirectory(
  context: DirectoryLoginContext,
  request: InteractionRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  credentials: { username: string; password: string },
  limit: LoginAttemptDecision,
): Promise<FastifyReply> {
  const outcome = await context.directorySignIn.authenticate(credentials.username, credentials.password);
  return answerOutcome(context, request, reply, loaded, credentials.username, outcome, limit);
}

async function answerOutcome(
  context: DirectoryLoginContext,
  request: InteractionRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  username: string,
  outcome: DirectorySignInOutcome,
  limit: LoginAttemptDecision,
): Promise<FastifyReply> {
  const { options, sendLoginPage } = context;
  const attempt = { ip: request.ip, username };
  const fields = {
    client_id: loaded.purpose.client.clientId,
    ip: request.ip,
    method: 'password',
    source: 'ldap',
  };
  switch (outcome.kind) {
    case 'ok':
      // draft-behera-ldap-password-policy §5.2.2.1: the password has expired and this bind used
      // one of the grace logins that exist so the person can change it: the change comes first.
      if (outcome.graceLoginsLeft !== undefined) {
        audit(request.log, AUDIT_EVENTS.loginFailed, {
          ...fields,
          reason: 'directory_password_expired_grace',
        });
        return sendPasswordChangePage(
          context,
          reply,
          loaded,
          username,
          'expired',
          200,
          undefined,
          outcome.graceLoginsLeft,
        );
      }
      return signedIn(context, request, reply, loaded, username, outcome);
    case 'invalid_credentials': {
      // The entry is known: the failure counts on its own lock too, whatever name found it.
      if (outcome.stableId !== undefined)
        await options.loginAttemptGuard?.allowAccount(attempt, directoryLoginAccountId(outcome.stableId));
      await options.loginAttemptGuard?.recordFailure(attempt);
      audit(request.log, AUDIT_EVENTS.loginFailed, { ...fields, reason: 'directory_invalid_credentials' });
      const warning = lastAttemptWarning(limit, request.language);
      const invalid = request.language.text('login.invalidCredentials');
      return sendLoginPage(reply, loaded, 401, username, warning ? `${invalid} ${warning}` : invalid);
    }
    case 'not_permitted':
      audit(request.log, AUDIT_EVENTS.loginFailed, {
        ...fields,
        reason: `directory_not_permitted_${outcome.reason}`,
      });
      return sendLoginPage(
        reply,
        loaded,
        403,
        username,
        outcome.reason === 'time' ? DIRECTORY_NOT_NOW_MESSAGE : DIRECTORY_NOT_HERE_MESSAGE,
      );
    case 'password_expired':
    case 'must_change_password':
      audit(request.log, AUDIT_EVENTS.loginFailed, { ...fields, reason: `directory_${outcome.kind}` });
      if (!outcome.canChange)
        return sendLoginPage(reply, loaded, 403, username, DIRECTORY_PASSWORD_EXPIRED_MESSAGE);
      return sendPasswordChangePage(
        context,
        reply,
        loaded,
        username,
        outcome.kind === 'password_expired' ? 'expired' : 'must_change',
        200,
      );
    default: {
      const refusal = REFUSALS[outcome.kind];
      audit(request.log, AUDIT_EVENTS.loginFailed, { ...fields, reason: refusal.reason });
      // RFC 9110 §10.2.3: a 503 says when to come back.
      if (refusal.status === 503) reply.header('retry-after', '30');
      return sendLoginPage(reply, loaded, refusal.status, username, refusal.message);
    }
  }
}

async function signedIn(
  context: DirectoryLoginContext,
  request: InteractionRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  username: string,
  { user, accountId }: { user: User | null; accountId: string },
): Promise<FastifyReply> {
  const fields = {
    client_id: loaded.purpose.client.clientId,
    ip: request.ip,
    method: 'password',
    source: 'ldap',
  };
  if (user === null) {
    // The directory accepted the password, but an operator disabled the local record.
    audit(request.log, AUDIT_EVENTS.loginFailed, { ...fields, reason: 'user_disabled' });
    return context.sendLoginPage(reply, loaded, 403, username, DIRECTORY_DISABLED_MESSAGE);
  }
  const guard = context.options.loginAttemptGuard;
  // The right password of a locked account is refused too: the lock is the person's, not the name's.
  const decision = (await guard?.allowAccount({ ip: request.ip, username }, accountId)) ?? { allowed: true };
  if (!decision.allowed) {
    audit(request.log, AUDIT_EVENTS.rateLimitExceeded, {
      limit: 'login_username',
      ip: request.ip,
      client_id: fields.client_id,
      retry_after_seconds: decision.retryAfterSeconds,
    });
    reply.header('retry-after', String(decision.retryAfterSeconds));
    return context.sendLoginPage(
      reply,
      loaded,
      429,
      username,
      tooManyAttemptsMessage(decision.retryAfterSeconds, request.language),
    );
  }
  await guard?.recordSuccess({ ip: request.ip, username }, accountId);
  audit(request.log, AUDIT_EVENTS.loginSucceeded, { ...fields, sub: user.sub });
  return context.steps.signedIn(request, reply, loaded, user, 'password');
}

function sendPasswordChangePage(
  context: DirectoryLoginContext,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  username: string,
  reason: 'expired' | 'must_change',
  status: number,
  errorMessage?: string,
  graceLoginsLeft?: number,
): FastifyReply {
  const page = renderDirectoryPasswordPage({
    graceLoginsLeft,
    csrfToken: csrfTokenFor(loaded.browserKey, 'directory-password', loaded.interaction.id),
    action: context.steps.pageUrl(loaded.interaction, 'directory-password'),
    username,
    reason,
    basePath: context.options.pageContext.basePath,
    errorMessage,
  });
  return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
}

/**
 * The change-password step: the directory changes the password with the current one (its own
 * policy decides), then the sign-in goes on with the new password as from the login form. Counted
 * by the login rate limits like the login form, since it checks a password too.
 */
export function registerDirectoryPasswordRoute(app: FastifyInstance, context: DirectoryLoginContext): void {
  const { steps, options } = context;
  app.get<{ Params: { id: string } }>(
    '/interaction/:id/directory-password',
    { config: { interaction: {} } },
    async (request, reply) => steps.redirectToPage(reply, steps.loaded(request), 'login'),
  );
  app.post<{ Params: { id: string } }>(
    '/interaction/:id/directory-password',
    { config: { interaction: { csrf: 'directory-password' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const field = (name: string) => stringField(request.body, name) ?? '';
      const username = field('username');
      const reason = field('reason') === 'must_change' ? 'must_change' : 'expired';
      const limit = options.loginAttemptGuard
        ? await options.loginAttemptGuard.allow({ ip: request.ip, username })
        : ({ allowed: true } as const);
      if (!limit.allowed) {
        reply.header('retry-after', String(limit.retryAfterSeconds));
        return context.sendLoginPage(
          reply,
          loaded,
          429,
          username,
          'Too many failed sign-in attempts. Please try again later.',
        );
      }
      const showStepAgain = (status: number, message: string) =>
        sendPasswordChangePage(context, reply, loaded, username, reason, status, message);
      if (field('new_password') === '' || field('new_password') !== field('confirm_password')) {
        return showStepAgain(400, 'The new passwords do not match.');
      }
      const changed = await context.directorySignIn.changePassword(
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
          await options.loginAttemptGuard?.recordFailure({ ip: request.ip, username });
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
      return signInWithDirectory(
        context,
        request,
        reply,
        loaded,
        { username, password: field('new_password') },
        limit,
      );
    },
  );
}
