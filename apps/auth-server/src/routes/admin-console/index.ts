import type { Clock, RandomSource } from '@oidc-orders/oauth-core';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { listLinkedIdentities } from '../../accounts/drizzle/linked-identities.js';
import {
  findClientDetail,
  findUserDetail,
  listClients,
  listKeys,
  listSessions,
  readOverview,
  searchUsers,
} from '../../admin/console-queries.js';
import { createUsersAdmin } from '../../admin/users-admin.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import type { AppDatabase } from '../../db/client.js';
import { ENDPOINTS } from '../../endpoints.js';
import type { AuthorizationFlow } from '../../interaction/authorization-flow.js';
import { minimumActivationDelaySeconds, rotateSigningKeys } from '../../keys/rotation.js';
import type { PasskeyRepository } from '../../mfa/passkey-repository.js';
import type { RecoveryCodeRepository } from '../../mfa/recovery-codes.js';
import type { TotpRepository } from '../../mfa/totp-repository.js';
import {
  type ConsolePageContext,
  renderClientPage,
  renderClientsPage,
  renderConfirmPage,
  renderKeysPage,
  renderNotFoundPage,
  renderOverviewPage,
  renderSessionsPage,
  renderUnavailablePage,
  renderUserPage,
  renderUsersPage,
} from '../../pages/admin/pages.js';
import { ACTION_WORDS, CONSOLE_WORDS } from '../../pages/admin/words.js';
import { sendHtml } from '../../pages/respond.js';
import type { PageContext } from '../authorization-reply.js';
import {
  type ActionServices,
  applicableActions,
  isUserActionName,
  runUserAction,
  USER_ACTIONS,
} from './actions.js';
import { type Operator, operatorOf, registerConsoleGuard } from './guard.js';

export interface AdminConsoleOptions {
  flow: AuthorizationFlow;
  db: AppDatabase;
  clock: Clock;
  random: RandomSource;
  pageContext: PageContext;
  /** The seed's `admins`. */
  admins: readonly string[];
  totp: TotpRepository;
  passkeys: PasskeyRepository;
  recoveryCodes: RecoveryCodeRepository;
}

/** Signing keys retired by a rotation stay published this long: the longest token lifetime. */
const KEEP_RETIRED_KEYS_PUBLISHED_SECONDS = 86_400;

const queryText = (query: unknown, name: string): string => {
  const value = (query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.slice(0, 200) : '';
};

const pageNumber = (query: unknown): number => {
  const value = Number.parseInt(queryText(query, 'page'), 10);
  return Number.isSafeInteger(value) && value > 0 ? value : 1;
};

/**
 * The operator console (docs/operator-guide.md "Console"): server-rendered pages under /admin for
 * the seed's `admins`, signed in here with a second factor. Reads are GETs; every change is a GET
 * confirm page, then a POST carrying the CSRF token, answered with a redirect to a GET page
 * (post/redirect/get), and one audit event naming the operator.
 */
export const adminConsoleRoutes: FastifyPluginAsync<AdminConsoleOptions> = async (app, options) => {
  const { db, clock, pageContext } = options;
  const root = `${pageContext.basePath}${ENDPOINTS.adminConsole.path}`;
  const path = (suffix: string) => `${ENDPOINTS.adminConsole.path}${suffix}`;
  registerConsoleGuard(app, { flow: options.flow, pageContext, admins: new Set(options.admins) });

  const services: ActionServices = {
    users: createUsersAdmin({
      db,
      keyEncryptionKey: app.config.keyEncryptionKey,
      clock,
      random: options.random,
      issuer: pageContext.issuer,
      signOut: app.userSignOut,
    }),
    passwordRecovery: app.passwordRecovery,
  };

  const contextOf = (request: FastifyRequest, notice?: ConsolePageContext['notice']): ConsolePageContext => ({
    basePath: pageContext.basePath,
    operator: operatorOf(request).user.username,
    notice,
  });

  /** The notice of a redirect after an action (`?done=<action>` or `?failed=<action>`). */
  const noticeOf = (request: FastifyRequest): ConsolePageContext['notice'] => {
    const done = queryText(request.query, 'done');
    const failed = queryText(request.query, 'failed');
    if (isUserActionName(failed) && failed === 'send-reset') {
      return { kind: 'error', text: ACTION_WORDS[failed].failed };
    }
    if (isUserActionName(done) || done === 'rotate') return { kind: 'ok', text: ACTION_WORDS[done].done };
    return undefined;
  };

  const page = { config: { console: 'page' as const } };
  const action = { config: { console: 'action' as const } };
  const send = (reply: FastifyReply, body: string, status = 200) => sendHtml(reply, status, body);
  const redirectTo = (reply: FastifyReply, location: string) =>
    reply.header('cache-control', 'no-store').redirect(location, 303);

  app.get(path(''), page, async (request, reply) => {
    const now = clock.nowSeconds();
    const overview = await readOverview(db, now, {
      maxFailuresPerUsername: app.config.rateLimits.loginMaxFailuresPerUsername,
      windowSeconds: app.config.rateLimits.loginFailureWindowSeconds,
    });
    return send(reply, renderOverviewPage(contextOf(request, noticeOf(request)), overview, null));
  });

  app.get(path('/users'), page, async (request, reply) => {
    const query = queryText(request.query, 'q');
    const users = await searchUsers(db, query, pageNumber(request.query));
    return send(reply, renderUsersPage(contextOf(request), query, users));
  });

  app.get<{ Params: { sub: string } }>(path('/users/:sub'), page, async (request, reply) => {
    const user = await findUserDetail(db, request.params.sub);
    if (user === null) return send(reply, renderNotFoundPage(contextOf(request), 'users'), 404);
    const [apps, passkeys, recoveryCodes, sessions, linked] = await Promise.all([
      options.totp.list(user.sub),
      options.passkeys.list(user.sub),
      options.recoveryCodes.remaining(user.sub),
      listSessions(db, clock.nowSeconds(), 1, user.sub),
      listLinkedIdentities(db, user.sub),
    ]);
    const body = renderUserPage(contextOf(request, noticeOf(request)), {
      user,
      factors: { authenticatorApps: apps.length, passkeys: passkeys.length, recoveryCodes },
      sessions,
      linked,
      actions: applicableActions(user, services),
    });
    return send(reply, body);
  });

  const userUrl = (sub: string) => `${root}/users/${encodeURIComponent(sub)}`;

  /** The user and action of a confirm page or its POST, when both exist and the action applies. */
  async function userAction(request: FastifyRequest<{ Params: { sub: string; action: string } }>) {
    const { sub, action: name } = request.params;
    if (!isUserActionName(name)) return null;
    const user = await findUserDetail(db, sub);
    if (user === null || !applicableActions(user, services).includes(name)) return null;
    return { user, name };
  }

  app.get<{ Params: { sub: string; action: string } }>(
    path('/users/:sub/:action'),
    page,
    async (request, reply) => {
      const found = await userAction(request);
      if (found === null) return send(reply, renderNotFoundPage(contextOf(request), 'users'), 404);
      const words = ACTION_WORDS[found.name];
      const body = renderConfirmPage(contextOf(request), {
        section: 'users',
        question: words.question(found.user.username),
        confirmLabel: words.confirm,
        action: `${userUrl(found.user.sub)}/${found.name}`,
        cancel: userUrl(found.user.sub),
        csrfToken: operatorOf(request).csrfToken,
        danger: USER_ACTIONS[found.name].danger,
      });
      return send(reply, body);
    },
  );

  app.post<{ Params: { sub: string; action: string } }>(
    path('/users/:sub/:action'),
    action,
    async (request, reply) => {
      const found = await userAction(request);
      if (found === null) return send(reply, renderNotFoundPage(contextOf(request), 'users'), 404);
      const operator: Operator = operatorOf(request);
      const ok = await runUserAction(found.name, found.user, services, {
        log: request.log,
        actor: operator.user.sub,
        ip: request.ip,
      });
      return redirectTo(reply, `${userUrl(found.user.sub)}?${ok ? 'done' : 'failed'}=${found.name}`);
    },
  );

  app.get(path('/sessions'), page, async (request, reply) => {
    const sessions = await listSessions(db, clock.nowSeconds(), pageNumber(request.query));
    return send(reply, renderSessionsPage(contextOf(request), sessions));
  });

  app.get(path('/clients'), page, async (request, reply) => {
    return send(reply, renderClientsPage(contextOf(request), await listClients(db)));
  });

  app.get<{ Params: { clientId: string } }>(path('/clients/:clientId'), page, async (request, reply) => {
    const client = await findClientDetail(db, request.params.clientId);
    if (client === null) return send(reply, renderNotFoundPage(contextOf(request), 'clients'), 404);
    return send(reply, renderClientPage(contextOf(request), client));
  });

  app.get(path('/keys'), page, async (request, reply) => {
    const keys = await listKeys(db, clock.nowSeconds());
    return send(reply, renderKeysPage(contextOf(request, noticeOf(request)), keys));
  });

  /** New keys are published before they sign: at least the JWKS cache time plus the refresh interval. */
  const activationDelay = () => minimumActivationDelaySeconds(app.config.metadataMaxAgeSeconds);

  app.get(path('/keys/rotate'), page, async (request, reply) => {
    const body = renderConfirmPage(contextOf(request), {
      section: 'keys',
      question: ACTION_WORDS.rotate.question(CONSOLE_WORDS.time.age(activationDelay())),
      confirmLabel: ACTION_WORDS.rotate.confirm,
      action: `${root}/keys/rotate`,
      cancel: `${root}/keys`,
      csrfToken: operatorOf(request).csrfToken,
      danger: false,
    });
    return send(reply, body);
  });

  app.post(path('/keys/rotate'), action, async (request, reply) => {
    const result = await rotateSigningKeys(db, app.config.keyEncryptionKey, clock, {
      activateInSeconds: activationDelay(),
      keepPublishedSeconds: KEEP_RETIRED_KEYS_PUBLISHED_SECONDS,
    });
    audit(request.log, AUDIT_EVENTS.keysRotated, {
      actor: operatorOf(request).user.sub,
      added: result.added.map((key) => key.kid),
      retired: result.retired,
      deleted: result.deleted,
    });
    return redirectTo(reply, `${root}/keys?done=rotate`);
  });

  app.get(path('/audit'), page, async (request, reply) => {
    return send(reply, renderUnavailablePage(contextOf(request), 'audit', CONSOLE_WORDS.audit.unavailable));
  });

  app.get(path('/seed-plan'), page, async (request, reply) => {
    return send(
      reply,
      renderUnavailablePage(contextOf(request), 'seedPlan', CONSOLE_WORDS.seedPlan.unavailable),
    );
  });
};
