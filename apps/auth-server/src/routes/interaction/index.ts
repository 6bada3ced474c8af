import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { chooseRequestLanguage } from '../../i18n/request-language.js';
import type { CsrfPurpose } from '../../interaction/csrf.js';
import { registerConsentRoutes } from './consent.js';
import { registerEnrolRoutes } from './enrol.js';
import { registerLoginRoutes } from './login.js';
import type { InteractionRoutesOptions } from './options.js';
import { registerSecondFactorRoutes } from './second-factor.js';
import {
  createInteractionSteps,
  type InteractionRequest,
  type InteractionSteps,
  type LoadedInteraction,
} from './steps.js';

export * from './options.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * A page of the interaction area: its interaction is loaded for this browser before the
     * handler runs, and a form's CSRF token checked for `csrf` (every POST names one).
     * `loadedBy: 'state'`: a return from an upstream provider, whose URL names no interaction;
     * the handler finds it from the stored `state` and loads it with `steps.load` (the same
     * browser binding), so the guard leaves it to the handler.
     */
    interaction?: { csrf?: CsrfPurpose; loadedBy?: 'state' };
  }
  interface FastifyRequest {
    /** Set by the interaction area's guard; read with `steps.loaded(request)`. */
    loadedInteraction: LoadedInteraction | null;
  }
}

/**
 * The area's one `preHandler`: the interaction of `/interaction/:id/…`, live and started by this
 * browser (else an error page), and on a form its CSRF token (else the form-expired page). A
 * route that declares no `interaction` config is refused: the area fails closed.
 */
function guardInteractionArea(app: FastifyInstance, steps: InteractionSteps): void {
  app.decorateRequest('loadedInteraction', null);
  app.addHook('preHandler', async (request, reply) => {
    const guard = request.routeOptions.config.interaction;
    if (guard === undefined) throw new Error(`${request.routeOptions.url} declares no interaction guard`);
    if (guard.loadedBy === 'state') return;
    const loaded = await steps.load(request as InteractionRequest, reply);
    if (loaded === null) return reply;
    if (guard.csrf !== undefined && !steps.checkCsrf(request, reply, loaded, guard.csrf)) return reply;
    request.loadedInteraction = loaded;
    chooseRequestLanguage(request, loaded.interaction.request.params.ui_locales);
  });
}

/**
 * The pages of an interaction (README "Pages"), one file per page flow, all built on the shared
 * steps in ./steps.ts: login, with each sign-in method's own routes (./methods/: password,
 * passkey, upstream providers, Kerberos), second factor (code, recovery code), enrolment, consent. (The end-session endpoint, which shares the SSO session but no interaction, is
 * ../end-session.ts.)
 */
export const interactionRoutes: FastifyPluginAsync<InteractionRoutesOptions> = async (app, options) => {
  const steps = createInteractionSteps(app, options);
  guardInteractionArea(app, steps);
  await registerLoginRoutes(app, steps, options);
  registerSecondFactorRoutes(app, steps, options);
  registerEnrolRoutes(app, steps, options);
  registerConsentRoutes(app, steps, options);
};
