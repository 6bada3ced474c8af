import type { UserStore } from '@oidc-orders/oauth-core';
import type { FastifyReply } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../../audit.js';
import type { DirectorySignIn } from '../../../directory/directory-sign-in.js';
import { interactionPagePath, PAGES } from '../../../endpoints.js';
import {
  type LoginAttemptDecision,
  lastAttemptWarning,
  tooManyAttemptsMessage,
} from '../../../interaction/login-attempts.js';
import type { PasswordRecovery } from '../../../mail/password-reset.js';
import { type InteractionRequest, type LoadedInteraction, stringField } from '../steps.js';
import {
  directoryPasswordVerifier,
  type PasswordOutcomeAnswer,
  registerDirectoryPasswordChange,
  sendPasswordChangePage,
} from './directory-password.js';
import { localPasswordVerifier, type PasswordVerifier, verifyWithChain } from './password-verifiers.js';
import type { InteractionArea, SignInMethod } from './types.js';

/** What the password method reads: local accounts, the directory (if any), mail recovery (if on). */
export interface PasswordMethodDependencies {
  users: Pick<UserStore, 'findUserByUsername'>;
  directory: DirectorySignIn | null;
  passwordRecovery: PasswordRecovery | null;
}

/** RFC 6585 §4: a refused attempt answers 429 with Retry-After; the page says the same in words. */
function sendRateLimited(
  area: InteractionArea,
  request: InteractionRequest,
  reply: FastifyReply,
  loaded: LoadedInteraction,
  username: string,
  decision: Extract<LoginAttemptDecision, { allowed: false }>,
) {
  audit(request.log, AUDIT_EVENTS.rateLimitExceeded, {
    // The account's counter is the per-username lock under the account's id: one name in the audit.
    limit: decision.limit === 'ip' ? 'login_ip' : 'login_username',
    ip: request.ip,
    client_id: loaded.purpose.client.clientId,
    retry_after_seconds: decision.retryAfterSeconds,
  });
  reply.header('retry-after', String(decision.retryAfterSeconds));
  const message = tooManyAttemptsMessage(decision.retryAfterSeconds, request.language);
  return area.showLoginPage(reply, loaded, 429, message, username);
}

/** The one place an outcome of any password verifier becomes an audit event, a count and a page. */
function passwordOutcomeAnswer(area: InteractionArea): PasswordOutcomeAnswer {
  const guard = area.loginAttemptGuard;
  return async (request, reply, loaded, username, outcome, limit) => {
    const attempt = { ip: request.ip, username };
    const fields = { client_id: loaded.purpose.client.clientId, ip: request.ip };
    switch (outcome.kind) {
      case 'verified':
        await guard?.recordSuccess(attempt, outcome.accountId);
        audit(request.log, AUDIT_EVENTS.loginSucceeded, {
          sub: outcome.user.sub,
          ...fields,
          method: 'password',
          ...outcome.audit,
        });
        return area.steps.signedIn(request, reply, loaded, outcome.user, 'password');
      case 'locked':
        return sendRateLimited(area, request, reply, loaded, username, outcome.decision);
      case 'refused': {
        if (outcome.failure) await guard?.recordFailure(attempt);
        audit(request.log, AUDIT_EVENTS.loginFailed, { reason: outcome.reason, ...fields, ...outcome.audit });
        if (outcome.retryAfterSeconds !== undefined)
          reply.header('retry-after', String(outcome.retryAfterSeconds));
        const warning = outcome.failure ? lastAttemptWarning(limit, request.language) : undefined;
        const message = warning ? `${outcome.message} ${warning}` : outcome.message;
        return area.showLoginPage(reply, loaded, outcome.status, message, username);
      }
      case 'change_password': {
        audit(request.log, AUDIT_EVENTS.loginFailed, {
          reason: outcome.auditReason,
          ...fields,
          ...outcome.audit,
        });
        const change = { username, reason: outcome.reason, graceLoginsLeft: outcome.graceLoginsLeft };
        return sendPasswordChangePage(area, reply, loaded, change, 200);
      }
    }
  };
}

/**
 * Username and password on the login form (CONTRACT "Pages"): one chain of password verifiers,
 * the directory's first when LDAP_URL is set (it answers only for usernames no local account
 * keeps), then the local accounts', which answers every other.
 */
export const passwordMethod = {
  name: 'password',
  enabledWith: (deps) => deps,
  async loginPage({ passwordRecovery }, _loaded, { pageContext }) {
    // Mail is on (README "Email"): the forgot-password page.
    return passwordRecovery
      ? { forgotPasswordHref: `${pageContext.basePath}${PAGES.forgotPassword.path}` }
      : {};
  },
  register({ users, directory }, app, area) {
    const { steps, loginAttemptGuard: guard } = area;
    const chain: PasswordVerifier[] = [
      ...(directory ? [directoryPasswordVerifier(directory)] : []),
      localPasswordVerifier,
    ];
    const answer = passwordOutcomeAnswer(area);
    if (directory) registerDirectoryPasswordChange(app, area, directory, answer);

    app.post<{ Params: { id: string } }>(
      interactionPagePath('login'),
      { config: { interaction: { csrf: 'login' } } },
      async (request, reply) => {
        const loaded = steps.loaded(request);
        const username = stringField(request.body, 'username') ?? '';
        const password = stringField(request.body, 'password') ?? '';
        // Counted before the password is checked; the decision may warn of the last attempt.
        const limit: LoginAttemptDecision = guard
          ? await guard.allow({ ip: request.ip, username })
          : { allowed: true };
        if (!limit.allowed) return sendRateLimited(area, request, reply, loaded, username, limit);
        const localUser = username === '' ? null : await users.findUserByUsername(username);
        const outcome = await verifyWithChain(
          chain,
          { username, password, ip: request.ip, language: request.language, localUser },
          guard,
        );
        return answer(request, reply, loaded, username, outcome, limit);
      },
    );
  },
} satisfies SignInMethod<PasswordMethodDependencies>;
