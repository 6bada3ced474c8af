import type { Clock, ProtocolStores } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  ACCOUNT_CLIENT,
  ACCOUNT_INTERACTION_PARAMS,
  RECENT_AUTHENTICATION_SECONDS,
} from '../../account/account-interaction.js';
import {
  type AccountNotice,
  accountResultUrl,
  formKeyOf,
  readAccountResult,
} from '../../account/account-result.js';
import type { AppAccessRepository } from '../../account/app-access.js';
import { describeUserAgent } from '../../account/user-agent.js';
import { listLinkedIdentities } from '../../accounts/drizzle/linked-identities.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import type { AppDatabase } from '../../db/client.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import type { AuthorizationFlow } from '../../interaction/authorization-flow.js';
import { csrfTokenFor, isValidCsrfToken } from '../../interaction/csrf.js';
import type { PasskeyRepository } from '../../mfa/passkey-repository.js';
import type { RecoveryCodeRepository } from '../../mfa/recovery-codes.js';
import type { TotpRepository } from '../../mfa/totp-repository.js';
import type { RelyingParty } from '../../mfa/webauthn.js';
import type { WebAuthnChallengeStore } from '../../mfa/webauthn-challenges.js';
import { renderAccountPage } from '../../pages/account.js';
import { renderRecoveryCodesShownPage } from '../../pages/recovery.js';
import { sendHtml } from '../../pages/respond.js';
import type { PageContext } from '../authorization-reply.js';
import { formActionSourcesOf, sendFormExpiredPage } from '../authorization-reply.js';
import type { LoginAttemptGuard } from '../interaction/index.js';
import { clientHomeLink, interactionPageUrl } from '../interaction/url.js';
import { type AccountHolder, type AccountPageHelpers, formField } from './account-area.js';
import { registerAccountAuthenticatorAppRoutes } from './account-authenticator-apps.js';
import {
  type AccountFederation,
  linkableProviders,
  registerAccountIdentityLinkRoutes,
  registerAccountUnlinkRoute,
} from './account-identity-links.js';
import { registerAccountPasskeyRoutes } from './account-passkeys.js';
import { registerAccountPasswordRoutes } from './account-password.js';
import { recentSecurityEvents } from './account-security-events.js';
import { registerAccountSessionRoutes } from './account-sessions.js';
import { registerAccountEmailRoutes } from './email-verification.js';

export interface AccountRoutesOptions {
  appAccess: AppAccessRepository;
  flow: AuthorizationFlow;
  stores: ProtocolStores;
  db: AppDatabase;
  totp: TotpRepository;
  recoveryCodes: RecoveryCodeRepository;
  /** Passkeys (src/routes/account/account-passkeys.ts). */
  passkeys: PasskeyRepository;
  webauthnChallenges: WebAuthnChallengeStore;
  relyingParty: RelyingParty;
  clock: Clock;
  pageContext: PageContext;
  /** The login form's limiter; the password change counts wrong current passwords with it. */
  loginAttemptGuard?: LoginAttemptGuard | undefined;
  /** Upstream providers (./account-identity-links.ts): a "Link" button for each one not linked yet. */
  federation?: AccountFederation | undefined;
}

type SignedIn = AccountHolder;

type Notice = Pick<AccountNotice, 'kind' | 'text'>;

/**
 * What a route of the account area asks of the browser before its handler runs (the area's one
 * `preHandler` hook checks it): `signed-in` (a page), `change` (a POST: also the form's CSRF
 * token), `recent-change` (a change to how the account is entered: also an authentication
 * within five minutes, NIST SP 800-63B §4.2.3 re-authentication). A route that declares none is
 * refused: the area fails closed.
 */
export type AccountGuard = 'signed-in' | 'change' | 'recent-change';

declare module 'fastify' {
  interface FastifyContextConfig {
    account?: AccountGuard;
  }
  interface FastifyRequest {
    /** The signed-in person, set by the account area's guard. */
    accountHolder: SignedIn | null;
  }
}

/** Remembers which application sent the person to the account page, for its "Back to" link. */
const RETURN_COOKIE = 'op_account_from';

/** Where the account page leads back to, and how its "Sign out" ends at that application. */
interface ReturnTarget {
  back: { href: string; label: string } | undefined;
  clientId: string | undefined;
  postLogoutRedirectUri: string | undefined;
}

const field = formField;

/**
 * The account page (README "Account page"): a signed-in person manages their authenticator apps,
 * recovery codes, password and sessions. Signing in goes through the ordinary interaction pages;
 * changes that could lock the owner out or let an intruder stay (factors, recovery codes) need an
 * authentication younger than five minutes, else the person signs in again first.
 */
export const accountRoutes: FastifyPluginAsync<AccountRoutesOptions> = async (app, options) => {
  const { flow, totp, recoveryCodes, clock, pageContext } = options;
  const accountUrl = `${pageContext.basePath}/account`;

  /** Starts the account page's sign-in (or re-authentication with max_age=0) and sends the browser there. */
  async function signInFirst(request: FastifyRequest, reply: FastifyReply, reauthenticate: boolean) {
    const browserKey = app.ssoSessions.ensureBrowserKey(request, reply);
    const session = await app.ssoSessions.current(request);
    const params: Record<string, string> = {
      ...ACCOUNT_INTERACTION_PARAMS,
      ...(reauthenticate ? { max_age: '0' } : {}),
    };
    const requirements = {
      client: ACCOUNT_CLIENT,
      scopes: ['openid'],
      prompt: [],
      maxAge: reauthenticate ? 0 : null,
    };
    const step = await flow.nextStep(requirements, session, null);
    const page =
      step.kind === 'complete' || step.kind === 'error' || step.kind === 'consent' ? 'login' : step.kind;
    const interaction = await flow.startInteraction({ params, resources: [] }, browserKey);
    return reply
      .header('cache-control', 'no-store')
      .redirect(interactionPageUrl(pageContext, interaction.id, page, ACCOUNT_CLIENT.clientId), 303);
  }

  /** The signed-in person at their level (second factor done when they have one), or `null` after redirecting. */
  async function signedIn(request: FastifyRequest, reply: FastifyReply): Promise<SignedIn | null> {
    const session = await app.ssoSessions.current(request);
    const step = await flow.nextStep(
      { client: ACCOUNT_CLIENT, scopes: ['openid'], prompt: [], maxAge: null },
      session,
      null,
    );
    if (step.kind !== 'complete') {
      await signInFirst(request, reply, false);
      return null;
    }
    return {
      session: step.session,
      user: step.user,
      browserKey: app.ssoSessions.ensureBrowserKey(request, reply),
    };
  }

  /** A POST: signed in, CSRF token valid; sensitive ones also need a recent authentication. */
  async function authorizedChange(
    request: FastifyRequest,
    reply: FastifyReply,
    sensitive: boolean,
  ): Promise<SignedIn | null> {
    const current = await signedIn(request, reply);
    if (current === null) return null;
    if (!isValidCsrfToken(field(request.body, 'csrf'), current.browserKey, 'account', current.session.id)) {
      sendFormExpiredPage(reply, pageContext);
      return null;
    }
    if (sensitive && clock.nowSeconds() - current.session.authTime > RECENT_AUTHENTICATION_SECONDS) {
      await signInFirst(request, reply, true);
      return null;
    }
    return current;
  }

  /** The guard's person; a handler of the area runs only after the guard set it. */
  function accountHolder(request: FastifyRequest): SignedIn {
    if (request.accountHolder === null) throw new Error('account route without its guard');
    return request.accountHolder;
  }

  app.decorateRequest('accountHolder', null);
  app.addHook('preHandler', async (request, reply) => {
    const guard = request.routeOptions.config.account;
    if (guard === undefined) throw new Error(`${request.routeOptions.url} declares no account guard`);
    const current =
      guard === 'signed-in'
        ? await signedIn(request, reply)
        : await authorizedChange(request, reply, guard === 'recent-change');
    if (current === null) return reply;
    request.accountHolder = current;
  });

  /**
   * Which application the person came from: `?from=<client_id>` (the link of the orders app, the
   * SPA, the start page) names it, and a cookie remembers it across sign-in and every form. Only a
   * registered client's registered home and post-logout URI are ever linked, never a URL from the
   * request, so this is no open redirect.
   */
  async function returnTarget(request: FastifyRequest): Promise<ReturnTarget> {
    const asked = (request.query as Record<string, unknown> | undefined)?.from;
    const clientId =
      typeof asked === 'string' && asked.length <= 256 ? asked : request.cookies[RETURN_COOKIE];
    const back = await clientHomeLink(options.stores, clientId);
    if (back === undefined || clientId === undefined) {
      return { back: undefined, clientId: undefined, postLogoutRedirectUri: undefined };
    }
    const client = await options.stores.clients.findClient(clientId);
    return { back, clientId, postLogoutRedirectUri: client?.postLogoutRedirectUris[0] };
  }

  /** Remembers a valid `?from` before anything else (the sign-in it may need comes back without it). */
  async function rememberReturn(request: FastifyRequest, reply: FastifyReply) {
    const target = await returnTarget(request);
    if (target.clientId === undefined || target.clientId === request.cookies[RETURN_COOKIE]) return;
    reply.setCookie(RETURN_COOKIE, target.clientId, {
      httpOnly: true,
      sameSite: 'lax',
      path: accountUrl,
      secure: new URL(pageContext.issuer).protocol === 'https:',
    });
  }

  /**
   * The page for a GET; for a POST (every change), post/redirect/get: a 303 to the result's GET
   * address, the notice tied to the form that was sent and the typed name kept after an error.
   * `status` is the GET page's status (the redirect is always 303).
   */
  async function sendAccountPage(reply: FastifyReply, current: SignedIn, status = 200, notice?: Notice) {
    const { request } = reply;
    // Post/redirect/get: the result is shown at a GET address, so a reload sends nothing again.
    // A lockout (RFC 6585 §4) answers 429 with Retry-After itself, as the login form does.
    if (request.method === 'POST' && status !== 429) {
      // The typed text field of the form (a name, or a new address; never a password).
      const typed = field(request.body, 'name').slice(0, 60) || field(request.body, 'email').slice(0, 254);
      const kept = notice?.kind === 'error' ? typed : '';
      const result: AccountNotice = {
        kind: notice?.kind ?? 'ok',
        text: notice?.text ?? '',
        form: formKeyOf(request.url),
        ...(kept ? { kept } : {}),
      };
      const location =
        notice === undefined
          ? accountUrl
          : accountResultUrl(accountUrl, result, current.browserKey, current.session.id);
      return reply.header('cache-control', 'no-store').redirect(location, 303);
    }
    const { user, session } = current;
    const sessions = await app.ssoSessions.listActive(user.sub);
    const target = await returnTarget(request);
    const linkedProviders = await listLinkedIdentities(options.db, user.sub);
    const linked = new Set(linkedProviders.map((provider) => provider.providerId));
    const page = renderAccountPage({
      name: user.name,
      email: user.email,
      emailVerified: user.emailVerified,
      canVerifyEmail: app.emailVerification !== null,
      username: user.username,
      csrfToken: csrfTokenFor(current.browserKey, 'account', session.id),
      authenticatorApps: await totp.list(user.sub),
      passkeys: await options.passkeys.list(user.sub),
      recoveryCodesRemaining: await recoveryCodes.remaining(user.sub),
      sessions: sessions.map((other) => ({
        id: other.id,
        device: describeUserAgent(other.userAgent),
        ip: other.ip,
        createdAt: other.createdAt,
        lastUsedAt: other.lastUsedAt,
        current: other.id === session.id,
      })),
      apps: await options.appAccess.list(user.sub),
      linkedProviders,
      linkableProviders: await linkableProviders(options.federation, linked),
      securityEvents: await recentSecurityEvents(app.auditEvents, options.stores.clients, user.sub),
      notice: notice ?? readAccountResult(request.query, current.browserKey, session.id),
      back: target.back,
      signOut: {
        action: `${pageContext.basePath}/logout`,
        csrfToken: csrfTokenFor(current.browserKey, 'logout', session.id),
        clientId: target.clientId,
        postLogoutRedirectUri: target.postLogoutRedirectUri,
      },
      basePath: pageContext.basePath,
      language: pageLanguageOf(request),
    });
    // CSP form-action also governs the redirect after "Sign out" (to the application's post-logout URI).
    const formActionSources =
      target.postLogoutRedirectUri === undefined ? [] : formActionSourcesOf(target.postLogoutRedirectUri);
    return sendHtml(reply, status, page, { formActionSources });
  }

  async function sendRecoveryCodes(reply: FastifyReply, current: SignedIn, request: FastifyRequest) {
    const codes = await recoveryCodes.regenerate(current.user.sub);
    audit(request.log, AUDIT_EVENTS.recoveryCodesIssued, { sub: current.user.sub });
    const page = renderRecoveryCodesShownPage({
      codes,
      continueCsrfToken: csrfTokenFor(current.browserKey, 'account', current.session.id),
      continueAction: accountUrl,
      basePath: pageContext.basePath,
      language: pageLanguageOf(request),
    });
    return sendHtml(reply, 200, page);
  }

  app.get(
    '/account',
    { config: { account: 'signed-in' }, onRequest: rememberReturn },
    async (request, reply) => {
      const current = accountHolder(request);
      return sendAccountPage(reply, current);
    },
  );

  // The "continue" button of the recovery codes page.
  app.post('/account', { config: { account: 'change' } }, async (_request, reply) => {
    return reply.header('cache-control', 'no-store').redirect(accountUrl, 303);
  });

  const helpers: AccountPageHelpers = {
    accountUrl,
    basePath: pageContext.basePath,
    accountHolder,
    sendAccountPage,
  };

  /** A factor was just proven: the session holds the level it demands, then its recovery codes or the page. */
  async function factorEnrolled(
    request: FastifyRequest,
    reply: FastifyReply,
    current: SignedIn,
    method: Parameters<typeof app.ssoSessions.addMethod>[2],
    notice: Notice,
  ) {
    app.securityNotices?.notify(request, current.user.sub, 'factor_added');
    current.session = await app.ssoSessions.addMethod(reply, current.session, method);
    // The first factor comes with its recovery codes, shown once.
    if (!(await recoveryCodes.hasSet(current.user.sub))) return sendRecoveryCodes(reply, current, request);
    return sendAccountPage(reply, current, 200, notice);
  }

  // ─── Authenticator apps ────────────────────────────────────────────────────────────────────────

  registerAccountAuthenticatorAppRoutes(app, { ...helpers, totp, factorEnrolled });

  // ─── Passkeys ──────────────────────────────────────────────────────────────────────────────────

  registerAccountPasskeyRoutes(app, {
    passkeys: options.passkeys,
    challenges: options.webauthnChallenges,
    rp: options.relyingParty,
    accountUrl,
    basePath: pageContext.basePath,
    accountHolder,
    sendAccountPage,
    factorEnrolled,
  });

  if (app.emailVerification && app.emailChange) {
    const { emailVerification: verification, emailChange: change } = app;
    registerAccountEmailRoutes(app, { verification, change, accountHolder, sendAccountPage });
  }

  if (options.federation) {
    registerAccountIdentityLinkRoutes(app, {
      federation: options.federation,
      pageContext,
      nowSeconds: () => clock.nowSeconds(),
      accountHolder,
      sendAccountPage,
    });
  }

  // ─── Recovery codes, password, sessions and apps, linked services ──────────────────────────────────

  app.post('/account/recovery-codes', { config: { account: 'recent-change' } }, async (request, reply) => {
    const current = accountHolder(request);
    return sendRecoveryCodes(reply, current, request);
  });

  registerAccountPasswordRoutes(app, {
    ...helpers,
    db: options.db,
    clock,
    stores: options.stores,
    loginAttemptGuard: options.loginAttemptGuard,
  });
  registerAccountSessionRoutes(app, { ...helpers, appAccess: options.appAccess });
  registerAccountUnlinkRoute(app, {
    db: options.db,
    federation: options.federation,
    accountHolder,
    sendAccountPage,
  });
};
