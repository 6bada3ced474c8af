import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import {
  finishPasskeyRegistration,
  type PasskeyRegistration,
  passkeyNameOf,
  REGISTRATION_FAILED,
  startPasskeyRegistration,
} from '../../mfa/passkey-registration.js';
import type { CeremonyBinding } from '../../mfa/webauthn-challenges.js';
import { html } from '../../pages/html.js';
import { renderEnrolPasskeyPage } from '../../pages/passkey.js';
import { sendHtml } from '../../pages/respond.js';

/** The account page's signed-in person, as src/routes/account/account.ts hands it over. */
export interface AccountPerson {
  session: { id: string; sub: string };
  user: { sub: string; username: string; name: string | null };
  browserKey: string;
}

type Notice = { kind: 'ok' | 'error'; text: string };

/** What the passkey section borrows from the account page (its guard, page and session helpers). */
export interface AccountPasskeyDeps<Person extends AccountPerson> extends PasskeyRegistration {
  accountUrl: string;
  basePath: string;
  /** The person the area's guard let through (signed in, CSRF token valid, recent where the route says). */
  accountHolder(request: FastifyRequest): Person;
  sendAccountPage(reply: FastifyReply, person: Person, status: number, notice: Notice): Promise<unknown>;
  /** A factor was just proven: record it in the session, then the recovery codes or the account page. */
  factorEnrolled(
    request: FastifyRequest,
    reply: FastifyReply,
    person: Person,
    method: { method: 'passkey'; userVerified: boolean; synced: boolean },
    notice: Notice,
  ): Promise<unknown>;
}

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/**
 * The account page's passkeys (README "Passkeys"): add (WebAuthn §7.1 registration), rename,
 * remove. Adding and removing change how the account can be entered, so they need the recent
 * authentication the authenticator apps need; renaming does not.
 */
export function registerAccountPasskeyRoutes<Person extends AccountPerson>(
  app: FastifyInstance,
  deps: AccountPasskeyDeps<Person>,
) {
  const { passkeys, accountUrl } = deps;
  const bindingOf = (person: Person): CeremonyBinding => ({
    browserKey: person.browserKey,
    purpose: 'register',
    boundTo: person.session.id,
  });

  /** Starts a registration: fresh options, their challenge held server-side, the page to run them. */
  async function sendEnrolPage(
    reply: FastifyReply,
    person: Person,
    name: string,
    status = 200,
    error?: string,
  ) {
    const options = await startPasskeyRegistration(deps, bindingOf(person), person.user);
    const page = renderEnrolPasskeyPage({
      form: {
        options,
        csrfToken: csrfTokenFor(person.browserKey, 'account', person.session.id),
        action: `${accountUrl}/passkeys/confirm`,
      },
      name,
      errorMessage: error,
      basePath: deps.basePath,
      links: html`<p><a href="${accountUrl}">${reply.request.language.text('passkeyEnrol.backToAccount')}</a></p>`,
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page);
  }

  app.post('/account/passkeys', { config: { account: 'recent-change' } }, async (request, reply) => {
    const person = deps.accountHolder(request);
    return sendEnrolPage(reply, person, passkeyNameOf(field(request.body, 'name')));
  });

  app.post('/account/passkeys/confirm', { config: { account: 'recent-change' } }, async (request, reply) => {
    const person = deps.accountHolder(request);
    const name = passkeyNameOf(field(request.body, 'name'));
    const credential = field(request.body, 'credential');
    const outcome = await finishPasskeyRegistration(
      deps,
      bindingOf(person),
      person.user.sub,
      credential,
      name,
    );
    if (!outcome.ok) {
      request.log.info({ reason: outcome.reason, detail: outcome.detail }, 'passkey registration refused');
      return sendEnrolPage(reply, person, name, 400, REGISTRATION_FAILED);
    }
    audit(request.log, AUDIT_EVENTS.factorEnrolled, {
      sub: person.user.sub,
      method: 'passkey',
      credential_id: outcome.credentialId,
    });
    // The attestation proved possession of the new credential (WebAuthn §7.1 step 14: user
    // presence; step 15: verification when its flag is set), like a first TOTP code does.
    const method = { method: 'passkey' as const, userVerified: outcome.userVerified, synced: outcome.synced };
    return deps.factorEnrolled(request, reply, person, method, {
      kind: 'ok',
      text: request.language.text('accountNotice.passkeyAdded'),
    });
  });

  app.post<{ Params: { id: string } }>(
    '/account/passkeys/:id/rename',
    { config: { account: 'change' } },
    async (request, reply) => {
      const person = deps.accountHolder(request);
      const name = field(request.body, 'name').trim().slice(0, 60);
      if (name === '' || !(await passkeys.rename(request.params.id, person.user.sub, name))) {
        return deps.sendAccountPage(reply, person, 400, {
          kind: 'error',
          text: request.language.text('accountNotice.passkeyNotRenamed'),
        });
      }
      audit(request.log, AUDIT_EVENTS.factorRenamed, {
        sub: person.user.sub,
        method: 'passkey',
        credential_id: request.params.id,
      });
      return deps.sendAccountPage(reply, person, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.renamed'),
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/account/passkeys/:id/remove',
    { config: { account: 'recent-change' } },
    async (request, reply) => {
      const person = deps.accountHolder(request);
      if (!(await passkeys.remove(request.params.id, person.user.sub))) {
        return deps.sendAccountPage(reply, person, 404, {
          kind: 'error',
          text: request.language.text('accountNotice.passkeyNotFound'),
        });
      }
      audit(request.log, AUDIT_EVENTS.factorRemoved, {
        sub: person.user.sub,
        method: 'passkey',
        credential_id: request.params.id,
      });
      app.securityNotices?.notify(request, person.user.sub, 'factor_removed');
      return deps.sendAccountPage(reply, person, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.passkeyRemoved'),
      });
    },
  );
}
