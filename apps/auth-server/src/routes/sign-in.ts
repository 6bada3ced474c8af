import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type {
  Clock,
  ProtocolConfig,
  ProtocolStores,
  RandomSource,
  TokenVerifier,
} from '@oidc-orders/oauth-core';
import { addSecurityHeaders, describeDatabaseFailure, isDatabaseUnavailable } from '@oidc-orders/service-kit';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { createAppAccess } from '../account/app-access.js';
import { createSignInSubjectReader } from '../accounts/drizzle/sign-in-subject.js';
import { createDrizzleAccountStore } from '../accounts/drizzle-account-store.js';
import type { AppDatabase } from '../db/client.js';
import { upstreamLogoutTarget } from '../federation/upstream-logout.js';
import { requestLanguagePlugin } from '../i18n/request-language.js';
import { type AuthorizationFlow, createAuthorizationFlow } from '../interaction/authorization-flow.js';
import { createInteractionRepository } from '../interaction/interaction-repository.js';
import { createSsoSessionRepository } from '../interaction/sso-session-repository.js';
import { createPasskeyRepository } from '../mfa/passkey-repository.js';
import { createRecoveryCodeRepository } from '../mfa/recovery-codes.js';
import { createTotpRepository } from '../mfa/totp-repository.js';
import { relyingPartyOf } from '../mfa/webauthn.js';
import { createWebAuthnChallengeStore } from '../mfa/webauthn-challenges.js';
import { renderErrorPage } from '../pages/error.js';
import type { DevelopmentSeedSummary } from '../pages/home.js';
import { cspDirectives, sendHtml } from '../pages/respond.js';
import { ssoSessionPlugin } from '../plugins/session.js';
import type { SeedPlan } from '../seed-plan/plan.js';
import { createPushedAuthorizationRequestStore } from '../storage/drizzle/pushed-authorization-requests.js';
import { accountRoutes } from './account/account.js';
import { accountLinkFinisher } from './account/account-identity-links.js';
import { emailLinkRoutes } from './account/email-verification.js';
import { adminConsoleRoutes } from './admin-console/index.js';
import { assetRoutes } from './assets.js';
import type { PageContext } from './authorization-reply.js';
import { authorizeRoutes } from './authorize.js';
import { devMailboxRoutes } from './dev-mailbox.js';
import {
  createDevicePurposeResolver,
  type DeviceVerificationOptions,
  deviceVerificationRoutes,
} from './device.js';
import { endSessionRoutes } from './end-session.js';
import { homeRoutes } from './home.js';
import { interactionRoutes, type LoginAttemptGuard } from './interaction/index.js';
import { passwordResetRoutes } from './password-reset.js';

/** What the sign-in routes use from oauth-core's world (the server's `app.protocol` fits). */
export interface SignInProtocolServices {
  stores: ProtocolStores;
  clock: Clock;
  random: RandomSource;
  /** Verifies `id_token_hint` at /logout. */
  verifier: TokenVerifier;
  config: ProtocolConfig;
}

export interface SignInRoutesOptions {
  /** Interactions, SSO sessions and consents live here (shared by every instance). */
  db: AppDatabase;
  protocol: SignInProtocolServices;
  /** Absolute SSO session lifetime, seconds (default 8 hours). */
  sessionTtl?: number;
  /** How long an interaction waits for the user, seconds (default 10 minutes). */
  interactionTtl?: number;
  loginAttemptGuard?: LoginAttemptGuard;
  /** RFC 8628 verification page: user-code entries per minute and client IP (default 10). */
  deviceUserCodeAttemptsPerMinute?: number;
  /** KEY_ENCRYPTION_KEY: encrypts authenticator app secrets at rest. */
  keyEncryptionKey: Uint8Array;
  /** Development only: the seeded clients and users the landing page lists. */
  developmentSeed?: DevelopmentSeedSummary;
  /** The seed's `admins`: who may use the operator console at /admin. */
  admins?: readonly string[];
  /** What applying the seed file now would change, for the console; `null` without a seed. */
  seedPlan?: () => Promise<SeedPlan | null>;
}

export const DEFAULT_SESSION_TTL = 8 * 3600;
export const DEFAULT_INTERACTION_TTL = 600;
export const DEFAULT_DEVICE_USER_CODE_ATTEMPTS_PER_MINUTE = 10;

/**
 * Everything a browser sees: /authorize, the login, consent and logout pages, their assets and
 * the SSO session cookie. Encapsulated (not fastify-plugin), so helmet's strict CSP, the HTML
 * error handler and the session decorator stay out of the JSON endpoints.
 */
export const signInRoutes: FastifyPluginAsync<SignInRoutesOptions> = async (app, options) => {
  const issuer = options.protocol.config.issuer;
  const pathname = new URL(issuer).pathname;
  const pageContext: PageContext = { issuer, basePath: pathname === '/' ? '' : pathname };

  await registerBrowserPlugins(app, options);
  // Browser routes answer with a page, never with JSON, whatever went wrong.
  app.setErrorHandler<FastifyError>((error, request, reply) => {
    if (isDatabaseUnavailable(error)) {
      // An outage, not a bug: 503 with Retry-After, logged as a warning without a stack (the
      // statement and the driver's reason, never the statement's parameters).
      request.log.warn({ database: describeDatabaseFailure(error) }, 'sign-in page: database unavailable');
      reply.header('retry-after', '1');
      return sendHtml(reply, 503, unavailablePage(pageContext.basePath));
    }
    const status = errorPageStatus(error);
    if (status === 500) request.log.error({ err: error }, 'sign-in page failed');
    return sendHtml(reply, status, errorPage(status, pageContext.basePath));
  });

  const factors = createSecondFactorStores(options);
  const interactions = createInteractionRepository(options.db);
  const flow = createFlow(options, { interactions });
  await registerPages(app, options, { pageContext, flow, factors, interactions });
  await registerMailRoutes(app, pageContext);
};

/** Cookies, forms, helmet's strict CSP and the SSO session, for these routes only. */
async function registerBrowserPlugins(
  app: Parameters<FastifyPluginAsync>[0],
  options: SignInRoutesOptions,
): Promise<void> {
  const { protocol } = options;
  // The platform may already have registered these at the root; registering twice would throw.
  if (!app.hasRequestDecorator('cookies')) await app.register(cookie);
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  addSecurityHeaders(app, {
    contentSecurityPolicy: { useDefaults: false, directives: cspDirectives() },
    // The pages never need to be framed or to leak the URL (it can carry a code) to other sites.
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
  });

  // After the cookies: the switcher's cookie is one of the inputs.
  const issuerUrl = new URL(protocol.config.issuer);
  await app.register(requestLanguagePlugin, {
    basePath: issuerUrl.pathname === '/' ? '' : issuerUrl.pathname,
    secure: issuerUrl.protocol === 'https:',
  });

  await app.register(ssoSessionPlugin, {
    repository: createSsoSessionRepository(options.db),
    issuer: protocol.config.issuer,
    clock: protocol.clock,
    random: protocol.random,
    sessionTtl: options.sessionTtl ?? DEFAULT_SESSION_TTL,
  });
  // An ended session (logout, or another user signing in) revokes its grants and notifies the
  // relying parties over the back channel (src/plugins/logout.ts).
  app.ssoSessions.onSessionEnded((session, request) => app.sessionLogout.sessionEnded(session, request));
}

/** A client error keeps its 4xx status; anything else is a 500. */
function errorPageStatus(error: FastifyError): number {
  return typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500
    ? error.statusCode
    : 500;
}

function unavailablePage(basePath: string): string {
  return renderErrorPage({
    title: 'Temporarily unavailable',
    message: 'The sign-in service is temporarily unavailable. Please try again in a moment.',
    code: 'temporarily_unavailable',
    basePath,
  });
}

function errorPage(status: number, basePath: string): string {
  if (status === 429) {
    // A rate limit (the device code entry): its Retry-After header is already on the reply.
    return renderErrorPage({
      title: 'Too many attempts',
      message: 'Too many attempts from your network. Please wait a minute, then try again.',
      code: 'rate_limited',
      basePath,
    });
  }
  return renderErrorPage({
    title: status === 500 ? 'Something went wrong' : 'This request is not valid',
    message:
      status === 500
        ? 'The sign-in service had a problem. Please try again in a moment.'
        : 'The request could not be understood.',
    code: status === 500 ? 'server_error' : 'invalid_request',
    basePath,
  });
}

/** The second factors' stores (authenticator app, recovery codes, passkeys) and WebAuthn's. */
function createSecondFactorStores(options: SignInRoutesOptions) {
  const { db, keyEncryptionKey, protocol } = options;
  const { clock, random } = protocol;
  return {
    totp: createTotpRepository({ db, keyEncryptionKey, clock, random, issuer: protocol.config.issuer }),
    recoveryCodes: createRecoveryCodeRepository({ db, keyEncryptionKey, clock, random }),
    passkeys: createPasskeyRepository({ db, clock, random }),
    webauthnChallenges: createWebAuthnChallengeStore({ db, clock, random, keyEncryptionKey }),
    // WebAuthn RP ID and origin from ISSUER, never from the request (README "Passkeys").
    relyingParty: relyingPartyOf(protocol.config.issuer),
  };
}

type SecondFactorStores = ReturnType<typeof createSecondFactorStores>;

function createFlow(
  options: SignInRoutesOptions,
  repositories: Pick<PageRouteParts, 'interactions'>,
): AuthorizationFlow {
  const { protocol } = options;
  return createAuthorizationFlow({
    stores: protocol.stores,
    ...repositories,
    clock: protocol.clock,
    random: protocol.random,
    protocolConfig: protocol.config,
    interactionTtl: options.interactionTtl ?? DEFAULT_INTERACTION_TTL,
    pushedRequests: createPushedAuthorizationRequestStore(options.db),
    signInSubject: createSignInSubjectReader(options.db),
  });
}

interface PageRouteParts {
  pageContext: PageContext;
  flow: AuthorizationFlow;
  factors: SecondFactorStores;
  interactions: ReturnType<typeof createInteractionRepository>;
}

/** The pages, in the order they have always been registered. */
async function registerPages(
  app: Parameters<FastifyPluginAsync>[0],
  options: SignInRoutesOptions,
  { pageContext, flow, factors, interactions }: PageRouteParts,
): Promise<void> {
  const { protocol } = options;
  const deviceVerification: DeviceVerificationOptions = {
    flow,
    stores: protocol.stores,
    clock: protocol.clock,
    random: protocol.random,
    pageContext,
    db: options.db,
    attemptsPerMinute:
      options.deviceUserCodeAttemptsPerMinute ?? DEFAULT_DEVICE_USER_CODE_ATTEMPTS_PER_MINUTE,
  };

  await app.register(assetRoutes);
  await app.register(homeRoutes, { pageContext, development: options.developmentSeed });
  await app.register(authorizeRoutes, { flow, pageContext });
  await app.register(deviceVerificationRoutes, deviceVerification);
  await app.register(interactionRoutes, {
    flow,
    stores: protocol.stores,
    interactions,
    pageContext,
    nowSeconds: () => protocol.clock.nowSeconds(),
    accounts: createDrizzleAccountStore(options.db),
    loginAttemptGuard: options.loginAttemptGuard,
    resolveDevicePurpose: createDevicePurposeResolver(deviceVerification),
    ...factors,
    // The account page's "Link <provider>" comes back through the same provider callback.
    finishAccountLink: accountLinkFinisher({
      app,
      flow,
      db: options.db,
      pageContext,
      nowSeconds: () => protocol.clock.nowSeconds(),
    }),
  });
  const federation = app.federation ?? undefined;
  await app.register(endSessionRoutes, {
    stores: protocol.stores,
    verifier: protocol.verifier,
    pageContext,
    ...(federation
      ? {
          upstreamLogout: (sessionId: string, continueUrl: string | null) =>
            upstreamLogoutTarget(
              { ...federation, issuer: pageContext.issuer, nowSeconds: () => protocol.clock.nowSeconds() },
              sessionId,
              continueUrl,
            ),
        }
      : {}),
  });
  await app.register(accountRoutes, {
    appAccess: createAppAccess({ db: options.db, stores: protocol.stores, clock: protocol.clock }),
    flow,
    stores: protocol.stores,
    db: options.db,
    ...factors,
    clock: protocol.clock,
    pageContext,
    loginAttemptGuard: options.loginAttemptGuard,
    federation,
  });
  await app.register(adminConsoleRoutes, {
    flow,
    db: options.db,
    clock: protocol.clock,
    pageContext,
    admins: options.admins ?? [],
    seedPlan: options.seedPlan ?? (async () => null),
  });
}

/** The forgot-password pages when mail is on, and the dev mailbox page outside production. */
async function registerMailRoutes(app: Parameters<FastifyPluginAsync>[0], pageContext: PageContext) {
  if (app.passwordRecovery) {
    await app.register(passwordResetRoutes, { recovery: app.passwordRecovery, pageContext });
  }
  if (app.emailVerification && app.emailChange) {
    const { emailVerification: verification, emailChange: change } = app;
    await app.register(emailLinkRoutes, { verification, change, basePath: pageContext.basePath });
  }
  const mail = app.config.mail;
  if (mail?.transport === 'dev-mailbox' && app.config.nodeEnv !== 'production') {
    await app.register(devMailboxRoutes, { directory: mail.directory, basePath: pageContext.basePath });
  }
}
