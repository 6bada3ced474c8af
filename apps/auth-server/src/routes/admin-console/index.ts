import type { Clock } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { AdminActor } from '../../admin/admin-audit.js';
import { AdminNotFoundError } from '../../admin/admin-errors.js';
import {
  createHourlySignInCounts,
  listSessions,
  readOverview,
  type SessionRow,
} from '../../admin/console-queries.js';
import type { SessionOverview } from '../../admin/sessions-admin.js';
import type { AppDatabase } from '../../db/client.js';
import type { AuthorizationFlow } from '../../interaction/authorization-flow.js';
import {
  type ConsolePageContext,
  renderConfirmPage,
  renderOverviewPage,
  renderSessionsPage,
} from '../../pages/admin/pages.js';
import { renderClientPage, renderClientsPage, renderKeysPage } from '../../pages/admin/registry.js';
import { renderSeedDrift, renderSeedPlanPage, type SeedPlanView } from '../../pages/admin/seed-plan.js';
import { renderUserPage, renderUsersPage } from '../../pages/admin/users.js';
import { SeedError } from '../../seed.js';
import type { SeedPlan } from '../../seed-plan/plan.js';
import type { PageContext } from '../authorization-reply.js';
import { applicableActions, isUserActionName, runUserAction, USER_ACTIONS } from './actions.js';
import { registerAuditLogPage } from './audit-log.js';
import { operatorOf, registerConsoleGuard } from './guard.js';
import { CONSOLE_PAGE_SIZE, consolePath, consoleReplies, queryText } from './replies.js';

export interface AdminConsoleOptions {
  flow: AuthorizationFlow;
  db: AppDatabase;
  clock: Clock;
  pageContext: PageContext;
  /** The seed's `admins`. */
  admins: readonly string[];
  /** What applying the seed file now would change; `null` without a seed (it throws when the file is unreadable). */
  seedPlan: () => Promise<SeedPlan | null>;
}

const pageNumber = (query: unknown): number => {
  const value = Number.parseInt(queryText(query, 'page'), 10);
  return Number.isSafeInteger(value) && value > 0 ? value : 1;
};

/** The operator, as the admin operations record who acted. */
const actorOf = (request: FastifyRequest): AdminActor => ({
  actor: operatorOf(request).user.sub,
  ip: request.ip,
});

/** A user's session as the console's session tables show it. */
const sessionRowOf =
  (username: string) =>
  (session: SessionOverview): SessionRow => ({
    id: session.sid,
    sub: session.sub,
    username,
    methods: session.methods,
    ip: session.ip,
    createdAt: session.createdAt,
    lastUsedAt: session.lastUsedAt,
    expiresAt: session.expiresAt,
  });

/** The notice of a redirect after an action (`?done=<action>` or `?failed=<action>`). */
function noticeOf(request: FastifyRequest): ConsolePageContext['notice'] {
  const done = queryText(request.query, 'done');
  if (queryText(request.query, 'failed') === 'send-reset') {
    return { kind: 'error', text: request.language.text('console.action.send-reset.failed') };
  }
  if (isUserActionName(done) || done === 'rotate')
    return { kind: 'ok', text: request.language.text(`console.action.${done}.done`) };
  return undefined;
}

/** A missing user or client is a 404 page, not an error page. */
async function orNull<T>(lookup: Promise<T>): Promise<T | null> {
  try {
    return await lookup;
  } catch (error) {
    if (error instanceof AdminNotFoundError) return null;
    throw error;
  }
}

/**
 * The operator console (docs/operator-guide.md "Console"): server-rendered pages under /admin for
 * the seed's `admins`, signed in here with a second factor. Reads are GETs; every change is a GET
 * confirm page, then a POST carrying the CSRF token, answered with a redirect to a GET page
 * (post/redirect/get). Changes run the admin operations (src/plugins/admin.ts), which the admin
 * API runs too, and each writes one audit event naming the operator.
 */
export const adminConsoleRoutes: FastifyPluginAsync<AdminConsoleOptions> = async (app, options) => {
  const { pageContext } = options;
  registerConsoleGuard(app, { flow: options.flow, pageContext, admins: new Set(options.admins) });
  registerOverviewAndSessions(app, options);
  registerUserPages(app, options);
  registerRegistryPages(app, options);
  registerAuditLogPage(app, { pageContext, pageSize: CONSOLE_PAGE_SIZE });
  const { contextOf, send } = consoleReplies(pageContext);
  app.get(consolePath('/seed-plan'), page, async (request, reply) =>
    send(reply, renderSeedPlanPage(contextOf(request), await seedPlanView(options.seedPlan))),
  );
};

/** How long the overview's seed drift may be old: planning reads every seed user (the plan page is always fresh). */
const SEED_DRIFT_MAX_AGE_SECONDS = 60;

/** The seed plan view, computed at most once a minute per instance, for the overview. */
function recentSeedPlanView(options: AdminConsoleOptions): () => Promise<SeedPlanView> {
  let last: { at: number; view: Promise<SeedPlanView> } | undefined;
  return () => {
    const now = options.clock.nowSeconds();
    if (last === undefined || now - last.at >= SEED_DRIFT_MAX_AGE_SECONDS) {
      const view = seedPlanView(options.seedPlan);
      // A failed plan is not kept: the next overview tries again.
      view.catch(() => {
        last = undefined;
      });
      last = { at: now, view };
    }
    return last.view;
  };
}

/** The plan, or why there is none: a seed file that does not load is what the next start would hit. */
async function seedPlanView(seedPlan: AdminConsoleOptions['seedPlan']): Promise<SeedPlanView> {
  try {
    const plan = await seedPlan();
    return plan === null ? { kind: 'no-seed' } : { kind: 'plan', plan };
  } catch (error) {
    if (error instanceof SeedError) return { kind: 'unreadable', problem: error.message };
    throw error;
  }
}

const page = { config: { console: 'page' as const } };
const action = { config: { console: 'action' as const } };

function registerOverviewAndSessions(app: FastifyInstance, options: AdminConsoleOptions) {
  const { db, clock } = options;
  const { contextOf, send } = consoleReplies(options.pageContext);
  const hourly = createHourlySignInCounts(db);
  const drift = recentSeedPlanView(options);

  app.get(consolePath(''), page, async (request, reply) => {
    const [overview, keys] = await Promise.all([
      readOverview(
        db,
        clock.nowSeconds(),
        {
          maxFailuresPerUsername: app.config.rateLimits.loginMaxFailuresPerUsername,
          windowSeconds: app.config.rateLimits.loginFailureWindowSeconds,
        },
        hourly,
      ),
      app.admin.keys.status(),
    ]);
    const signing = keys.filter((key) => key.state === 'active').map((key) => key.ageSeconds);
    const keyAgeSeconds = signing.length === 0 ? null : Math.min(...signing);
    const context = contextOf(request, noticeOf(request));
    const seedDrift = renderSeedDrift(context, await drift());
    const body = renderOverviewPage(context, { overview, keyAgeSeconds, seedDrift });
    return send(reply, body);
  });

  app.get(consolePath('/sessions'), page, async (request, reply) => {
    const sessions = await listSessions(db, clock.nowSeconds(), pageNumber(request.query));
    return send(reply, renderSessionsPage(contextOf(request), sessions));
  });
}

function registerUserPages(app: FastifyInstance, options: AdminConsoleOptions) {
  const { contextOf, send, redirectTo, notFound } = consoleReplies(options.pageContext);
  const root = `${options.pageContext.basePath}${consolePath('')}`;
  const userUrl = (sub: string) => `${root}/users/${encodeURIComponent(sub)}`;
  const mailOn = () => app.passwordRecovery !== null;

  app.get(consolePath('/users'), page, async (request, reply) => {
    const search = { q: queryText(request.query, 'q'), cursor: queryText(request.query, 'cursor') };
    const found = await app.admin.users.search({
      q: search.q,
      limit: CONSOLE_PAGE_SIZE,
      ...(search.cursor ? { cursor: search.cursor } : {}),
    });
    return send(reply, renderUsersPage(contextOf(request), search, found));
  });

  app.get<{ Params: { sub: string } }>(consolePath('/users/:sub'), page, async (request, reply) => {
    const user = await orNull(app.admin.users.detail(request.params.sub));
    if (user === null) return notFound(request, reply, 'users');
    const sessions = (await app.admin.sessions.sessionsOf(user.sub)).map(sessionRowOf(user.username));
    const actions = applicableActions(user, mailOn());
    return send(reply, renderUserPage(contextOf(request, noticeOf(request)), { user, sessions, actions }));
  });

  /** The user and action of a confirm page or its POST, when both exist and the action applies. */
  async function userAction(request: FastifyRequest<{ Params: { sub: string; action: string } }>) {
    const { sub, action: name } = request.params;
    if (!isUserActionName(name)) return null;
    const user = await orNull(app.admin.users.detail(sub));
    if (user === null || !applicableActions(user, mailOn()).includes(name)) return null;
    return { user, name };
  }

  app.get<{ Params: { sub: string; action: string } }>(
    consolePath('/users/:sub/:action'),
    page,
    async (request, reply) => {
      const found = await userAction(request);
      if (found === null) return notFound(request, reply, 'users');
      const body = renderConfirmPage(contextOf(request), {
        section: 'users',
        question: request.language.text(`console.action.${found.name}.question`, {
          who: found.user.username,
        }),
        confirmLabel: request.language.text(`console.action.${found.name}.confirm`),
        action: `${userUrl(found.user.sub)}/${found.name}`,
        cancel: userUrl(found.user.sub),
        csrfToken: operatorOf(request).csrfToken,
        danger: USER_ACTIONS[found.name].danger,
      });
      return send(reply, body);
    },
  );

  app.post<{ Params: { sub: string; action: string } }>(
    consolePath('/users/:sub/:action'),
    action,
    async (request, reply) => {
      const found = await userAction(request);
      if (found === null) return notFound(request, reply, 'users');
      const ok = await runUserAction(found.name, app.admin.users, found.user.sub, actorOf(request));
      return redirectTo(reply, `${userUrl(found.user.sub)}?${ok ? 'done' : 'failed'}=${found.name}`);
    },
  );
}

function registerRegistryPages(app: FastifyInstance, options: AdminConsoleOptions) {
  const { contextOf, send, redirectTo, notFound } = consoleReplies(options.pageContext);
  const root = `${options.pageContext.basePath}${consolePath('')}`;

  app.get(consolePath('/clients'), page, async (request, reply) =>
    send(reply, renderClientsPage(contextOf(request), await app.admin.registry.clients())),
  );

  app.get<{ Params: { clientId: string } }>(
    consolePath('/clients/:clientId'),
    page,
    async (request, reply) => {
      const client = await orNull(app.admin.registry.client(request.params.clientId));
      if (client === null) return notFound(request, reply, 'clients');
      return send(reply, renderClientPage(contextOf(request), client));
    },
  );

  app.get(consolePath('/keys'), page, async (request, reply) =>
    send(reply, renderKeysPage(contextOf(request, noticeOf(request)), await app.admin.keys.status())),
  );

  app.get(consolePath('/keys/rotate'), page, async (request, reply) => {
    const body = renderConfirmPage(contextOf(request), {
      section: 'keys',
      question: request.language.text('console.action.rotate.question'),
      confirmLabel: request.language.text('console.action.rotate.confirm'),
      action: `${root}/keys/rotate`,
      cancel: `${root}/keys`,
      csrfToken: operatorOf(request).csrfToken,
      danger: false,
    });
    return send(reply, body);
  });

  app.post(consolePath('/keys/rotate'), action, async (request, reply) => {
    await app.admin.keys.rotate(actorOf(request));
    return redirectTo(reply, `${root}/keys?done=rotate`);
  });
}
