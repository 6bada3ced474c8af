import { dummyPasswordVerify, verifyPassword } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { canonicalUsername } from '../../accounts/canonical-username.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { renderLoginPage } from '../../pages/login.js';
import { sendHtml } from '../../pages/respond.js';
import {
  type DirectoryLoginContext,
  registerDirectoryPasswordRoute,
  signInWithDirectory,
} from './directory-login.js';
import { kerberosSignInRoutes } from './kerberos.js';
import {
  type InteractionRoutesOptions,
  type LoginAttempt,
  type LoginAttemptDecision,
  lastAttemptWarning,
  tooManyAttemptsMessage,
} from './options.js';
import { issueAuthenticationCeremony } from './passkey.js';
import {
  type InteractionRequest,
  type InteractionSteps,
  type LoadedInteraction,
  stringField,
} from './steps.js';
import { upstreamButtons, upstreamSignInRoutes } from './upstream.js';

/**
 * The login page: username and password (CONTRACT "Pages"), and, when Kerberos is configured, the
 * organisation-account link whose route lives in ./kerberos.ts.
 */
export async function registerLoginRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): Promise<void> {
  const { pageContext, stores } = options;

  async function sendLoginPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    status: number,
    username?: string,
    errorMessage?: string,
  ) {
    const id = loaded.interaction.id;
    const passkey = await issueAuthenticationCeremony(options, loaded, null, []);
    const page = renderLoginPage({
      clientName: loaded.purpose.client.clientName,
      csrfToken: csrfTokenFor(loaded.browserKey, 'login', id),
      // OIDC Core §3.1.2.1 login_hint pre-fills the username.
      username: username ?? loaded.purpose.loginHint,
      errorMessage,
      basePath: pageContext.basePath,
      kerberosHref: options.kerberos ? steps.pageUrl(loaded.interaction, 'kerberos') : undefined,
      passkey: { ...passkey, action: steps.pageUrl(loaded.interaction, 'passkey') },
      forgotPasswordHref: app.passwordRecovery ? `${pageContext.basePath}/forgot-password` : undefined,
      // The Kerberos challenge's body is this form too: it must post to the login URL.
      formAction: options.kerberos ? steps.pageUrl(loaded.interaction, 'login') : undefined,
      identityProviders: await upstreamButtons(
        options.federation,
        loaded.interaction.id,
        pageContext.basePath,
      ),
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  /** RFC 6585 §4: a refused attempt answers 429 with Retry-After; the page says the same in words. */
  async function refusedByRateLimit(
    request: InteractionRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
  ) {
    const username = stringField(request.body, 'username') ?? '';
    if (!options.loginAttemptGuard) return { allowed: true } as const;
    return answerRefusal(
      request,
      reply,
      loaded,
      await options.loginAttemptGuard.allow({ ip: request.ip, username }),
    );
  }

  /** The decision when it allows; else the 429 page is sent and the answer is `null`. */
  function answerRefusal(
    request: InteractionRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    decision: LoginAttemptDecision,
  ) {
    const username = stringField(request.body, 'username') ?? '';
    if (decision.allowed) return decision;
    audit(request.log, AUDIT_EVENTS.rateLimitExceeded, {
      // The account's counter is the per-username lock under the account's id: one name in the audit.
      limit: decision.limit === 'ip' ? 'login_ip' : 'login_username',
      ip: request.ip,
      client_id: loaded.purpose.client.clientId,
      retry_after_seconds: decision.retryAfterSeconds,
    });
    reply.header('retry-after', String(decision.retryAfterSeconds));
    sendLoginPage(
      reply,
      loaded,
      429,
      username,
      tooManyAttemptsMessage(decision.retryAfterSeconds, request.language),
    );
    return null;
  }

  const directory: DirectoryLoginContext | null = app.directorySignIn
    ? {
        directorySignIn: app.directorySignIn,
        steps,
        options,
        sendLoginPage: (reply, loaded, status, username, message) =>
          sendLoginPage(reply, loaded, status, username, message),
      }
    : null;
  if (directory !== null) registerDirectoryPasswordRoute(app, directory);

  app.get<{ Params: { id: string } }>(
    '/interaction/:id/login',
    { config: { interaction: {} } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      return sendLoginPage(reply, loaded, 200);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/interaction/:id/login',
    { config: { interaction: { csrf: 'login' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      // `null`: refused and answered; else the decision, which may warn of the last attempt.
      const limit = await refusedByRateLimit(request, reply, loaded);
      if (limit === null) return reply;

      const username = stringField(request.body, 'username') ?? '';
      const password = stringField(request.body, 'password') ?? '';
      const attempt: LoginAttempt = { ip: request.ip, username };
      const clientId = loaded.purpose.client.clientId;
      const user = username === '' ? null : await stores.users.findUserByUsername(username);
      // Local users first; any other username (and a directory user's own record) asks the directory.
      if (directory !== null && username !== '' && directory.directorySignIn.handles(user)) {
        return signInWithDirectory(directory, request, reply, loaded, { username, password }, limit);
      }
      // The account is known: its own counter is the person's lock, whatever spelling found it.
      // An unknown name is counted the same way (same queries, same time: no account enumeration).
      if (options.loginAttemptGuard) {
        const accountId = user?.sub ?? `unknown:${canonicalUsername(username)}`;
        const decision = await options.loginAttemptGuard.allowAccount(attempt, accountId);
        if (answerRefusal(request, reply, loaded, decision) === null) return reply;
      }
      // An unknown username costs the same scrypt run as a known one: timing does not tell them apart.
      let valid = false;
      if (user === null) await dummyPasswordVerify();
      else valid = await verifyPassword(password, user.passwordHash);
      if (user === null || !valid) {
        await options.loginAttemptGuard?.recordFailure(attempt);
        audit(request.log, AUDIT_EVENTS.loginFailed, {
          reason: user === null ? 'unknown_user' : 'wrong_password',
          ...(user === null ? {} : { sub: user.sub }),
          client_id: clientId,
          ip: request.ip,
        });
        const invalid = request.language.text('login.invalidCredentials');
        const warning = lastAttemptWarning(limit, request.language);
        const message = warning ? `${invalid} ${warning}` : invalid;
        return sendLoginPage(reply, loaded, 401, username, message);
      }
      await options.loginAttemptGuard?.recordSuccess(attempt, user.sub);
      audit(request.log, AUDIT_EVENTS.loginSucceeded, {
        sub: user.sub,
        client_id: clientId,
        ip: request.ip,
        method: 'password',
      });
      return steps.signedIn(request, reply, loaded, user, 'password');
    },
  );

  if (options.federation) {
    await app.register(upstreamSignInRoutes<LoadedInteraction>(), {
      ...options.federation,
      pageContext,
      nowSeconds: options.nowSeconds,
      steps: {
        loaded: steps.loaded,
        load: steps.load,
        interactionIdOf: (loaded) => loaded.interaction.id,
        browserKeyOf: (loaded) => loaded.browserKey,
        requestBrowserKey: (request) => app.ssoSessions.browserKey(request),
        checkCsrf: (request, reply, loaded) => steps.checkCsrf(request, reply, loaded, 'login'),
        formActionSourcesOf: (loaded) => loaded.purpose.formActionSources,
        clientIdOf: (loaded) => loaded.purpose.client.clientId,
        showLoginPage: (reply, loaded, status, message) =>
          sendLoginPage(reply, loaded, status, undefined, message),
        signedIn: (request, reply, loaded, user, details, onSessionStarted) =>
          steps.signedIn(request, reply, loaded, user, 'federated', details, onSessionStarted),
      },
    });
  }

  if (options.kerberos) {
    await app.register(kerberosSignInRoutes<LoadedInteraction>(), {
      ...options.kerberos,
      pageContext,
      steps: {
        loaded: steps.loaded,
        clientIdOf: (loaded) => loaded.purpose.client.clientId,
        showLoginPage: (reply, loaded, status, message) =>
          sendLoginPage(reply, loaded, status, undefined, message),
        signedIn: (request, reply, loaded, user) => steps.signedIn(request, reply, loaded, user, 'kerberos'),
      },
    });
  }
}
