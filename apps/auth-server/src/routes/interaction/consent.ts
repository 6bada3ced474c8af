import type { FastifyInstance } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { interactionPagePath } from '../../endpoints.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { approvedStep } from '../../interaction/authorization-flow.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import { renderConsentPage } from '../../pages/consent.js';
import { sendHtml } from '../../pages/respond.js';
import { sendErrorPage } from '../authorization-reply.js';
import type { InteractionRoutesOptions } from './options.js';
import { type InteractionSteps, stringField } from './steps.js';

/**
 * The consent page (CONTRACT "Pages": buttons `decision=approve|deny`). Allow remembers the scopes
 * for the client (revocable on the account page); Deny ends the interaction with `access_denied`.
 */
export function registerConsentRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): void {
  const { flow, interactions, pageContext } = options;

  app.get<{ Params: { id: string } }>(
    interactionPagePath('consent'),
    { config: { interaction: {} } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const session = await loaded.session();
      const step = await flow.nextStep(
        loaded.purpose.requirements,
        session,
        steps.progressOf(loaded.interaction),
        loaded.signInSubject,
      );
      if (step.kind !== 'consent' && step.kind !== 'complete') {
        return steps.redirectToPage(reply, loaded, step.kind === 'error' ? 'login' : step.kind);
      }
      const page = renderConsentPage({
        clientName: loaded.purpose.client.clientName,
        clientHost: loaded.purpose.client.fromMetadataDocument
          ? new URL(loaded.purpose.client.clientId).host
          : undefined,
        userDisplayName: step.user.name ?? step.user.username,
        scopes: step.scopes,
        csrfToken: csrfTokenFor(loaded.browserKey, 'consent', loaded.interaction.id),
        basePath: pageContext.basePath,
        notice: loaded.purpose.consentNotice && request.language.text(loaded.purpose.consentNotice),
        language: pageLanguageOf(request),
      });
      return sendHtml(reply, 200, page, { formActionSources: loaded.purpose.formActionSources });
    },
  );

  app.post<{ Params: { id: string } }>(
    interactionPagePath('consent'),
    { config: { interaction: { csrf: 'consent' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const decision = stringField(request.body, 'decision');
      if (decision !== 'approve' && decision !== 'deny') {
        return sendErrorPage(
          reply,
          400,
          { title: 'Unknown choice', message: 'Please choose Allow or Deny.', code: 'invalid_request' },
          pageContext,
        );
      }
      const session = await loaded.session();
      const clientId = loaded.purpose.client.clientId;

      if (decision === 'deny') {
        const { id, browserHash } = loaded.interaction;
        const consumed = await interactions.consume(id, browserHash, options.nowSeconds());
        if (consumed === null) return steps.sendAlreadyCompleted(reply);
        audit(request.log, AUDIT_EVENTS.consentDenied, {
          ...(session ? { sub: session.sub } : {}),
          client_id: clientId,
        });
        return loaded.purpose.deny(reply, session?.sub ?? null);
      }

      const progress = steps.progressOf(loaded.interaction);
      const step = await flow.nextStep(loaded.purpose.requirements, session, progress, loaded.signInSubject);
      if (step.kind !== 'consent' && step.kind !== 'complete') {
        // The session ended (or changed) while the consent page was open: sign in first.
        return steps.redirectToPage(reply, loaded, step.kind === 'error' ? 'login' : step.kind);
      }
      // The approval completes the request now (approvedStep). The statement that consumes the
      // interaction remembers the scopes for the client: nothing is written for a second submission.
      const approval = { sub: step.user.sub, clientId, scopes: step.scopes };
      const { id, browserHash } = loaded.interaction;
      const consumed = await interactions.consume(id, browserHash, options.nowSeconds(), approval);
      if (consumed === null) return steps.sendAlreadyCompleted(reply);
      audit(request.log, AUDIT_EVENTS.consentGranted, {
        sub: step.user.sub,
        client_id: clientId,
        scopes: [...step.scopes],
      });
      return loaded.purpose.complete(reply, approvedStep(step));
    },
  );
}
