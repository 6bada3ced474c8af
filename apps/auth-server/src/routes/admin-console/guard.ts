import type { User } from '@oidc-orders/oauth-core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  CONSOLE_CLIENT,
  CONSOLE_INTERACTION_PARAMS,
  CONSOLE_STEP_UP_CLIENT,
  CONSOLE_STEP_UP_PARAMS,
} from '../../admin/console-interaction.js';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import type { AuthorizationFlow } from '../../interaction/authorization-flow.js';
import { csrfTokenFor, isValidCsrfToken } from '../../interaction/csrf.js';
import type { SsoSession } from '../../interaction/sso-session-repository.js';
import { renderForbiddenPage } from '../../pages/admin/pages.js';
import { sendHtml } from '../../pages/respond.js';
import type { PageContext } from '../authorization-reply.js';
import { sendFormExpiredPage } from '../authorization-reply.js';
import { interactionPageUrl } from '../interaction/url.js';

/**
 * What a route of the console asks before its handler runs (the area's one `preHandler` checks
 * it): `page` (a GET: an operator signed in with a second factor) or `action` (a POST: also the
 * form's CSRF token). A route that declares neither is refused: the area fails closed.
 */
export type ConsoleGuard = 'page' | 'action';

/** The person the guard let through. */
export interface Operator {
  session: SsoSession;
  user: User;
  browserKey: string;
  /** The token every console form carries, bound to this browser and this session. */
  csrfToken: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    console?: ConsoleGuard;
  }
  interface FastifyRequest {
    /** The operator, set by the console area's guard. */
    consoleOperator: Operator | null;
  }
}

export interface ConsoleGuardOptions {
  flow: AuthorizationFlow;
  pageContext: PageContext;
  /** The seed's `admins`: usernames. */
  admins: ReadonlySet<string>;
}

const CSRF_PURPOSE = 'admin-console';

const formField = (body: unknown, name: string): unknown =>
  (body as Record<string, unknown> | null | undefined)?.[name];

/**
 * The console area's guard, in this order: signed in at all (else the ordinary sign-in), one of
 * the seed's `admins` (else 403: a person who is not an operator is never asked for more), at the
 * multi-factor level (else the step-up: the second-factor page, or enrolment when the operator
 * has no factor yet; NIST SP 800-63B AAL2 for administrative access), then for a POST the form's
 * CSRF token.
 */
export function registerConsoleGuard(app: FastifyInstance, options: ConsoleGuardOptions): void {
  const { flow, pageContext, admins } = options;

  async function sendToInteraction(
    request: FastifyRequest,
    reply: FastifyReply,
    params: Record<string, string>,
    page: string,
  ) {
    const browserKey = app.ssoSessions.ensureBrowserKey(request, reply);
    const interaction = await flow.startInteraction({ params, resources: [] }, browserKey);
    const url = interactionPageUrl(pageContext, interaction.id, page, CONSOLE_CLIENT.clientId);
    return reply.header('cache-control', 'no-store').redirect(url, 303);
  }

  const levelStep = (client: typeof CONSOLE_CLIENT, session: SsoSession | null) =>
    flow.nextStep({ client, scopes: ['openid'], prompt: [], maxAge: null }, session, null);

  async function operatorOf(request: FastifyRequest, reply: FastifyReply): Promise<Operator | null> {
    const session = await app.ssoSessions.current(request);
    const signedIn = await levelStep(CONSOLE_CLIENT, session);
    if (signedIn.kind !== 'complete') {
      const page = signedIn.kind === 'otp' || signedIn.kind === 'enrol' ? signedIn.kind : 'login';
      await sendToInteraction(request, reply, CONSOLE_INTERACTION_PARAMS, page);
      return null;
    }
    if (!admins.has(signedIn.user.username)) {
      audit(request.log, AUDIT_EVENTS.adminConsoleRefused, { sub: signedIn.user.sub, ip: request.ip });
      await sendHtml(reply, 403, renderForbiddenPage(pageContext.basePath, pageLanguageOf(request)));
      return null;
    }
    const stepUp = await levelStep(CONSOLE_STEP_UP_CLIENT, signedIn.session);
    if (stepUp.kind === 'otp' || stepUp.kind === 'enrol') {
      await sendToInteraction(request, reply, CONSOLE_STEP_UP_PARAMS, stepUp.kind);
      return null;
    }
    if (stepUp.kind !== 'complete') throw new Error(`console step-up ended in ${stepUp.kind}`);
    const browserKey = app.ssoSessions.ensureBrowserKey(request, reply);
    return {
      session: stepUp.session,
      user: stepUp.user,
      browserKey,
      csrfToken: csrfTokenFor(browserKey, CSRF_PURPOSE, stepUp.session.id),
    };
  }

  app.decorateRequest('consoleOperator', null);
  app.addHook('preHandler', async (request, reply) => {
    const guard = request.routeOptions.config.console;
    if (guard === undefined) throw new Error(`${request.routeOptions.url} declares no console guard`);
    const operator = await operatorOf(request, reply);
    if (operator === null) return reply;
    const token = formField(request.body, 'csrf');
    if (
      guard === 'action' &&
      !isValidCsrfToken(token, operator.browserKey, CSRF_PURPOSE, operator.session.id)
    ) {
      sendFormExpiredPage(reply, pageContext);
      return reply;
    }
    request.consoleOperator = operator;
  });
}

/** The guard's operator; a handler of the area runs only after the guard set it. */
export function operatorOf(request: FastifyRequest): Operator {
  if (request.consoleOperator === null) throw new Error('console route without its guard');
  return request.consoleOperator;
}
