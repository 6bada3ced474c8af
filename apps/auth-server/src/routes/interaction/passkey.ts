import type { User } from '@oidc-orders/oauth-core';
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AUDIT_EVENTS, audit } from '../../audit.js';
import { interactionPagePath } from '../../endpoints.js';
import type { MessageKey } from '../../i18n/catalogues/en.js';
import { pageLanguageOf } from '../../i18n/request-language.js';
import type { Translator } from '../../i18n/translator.js';
import { csrfTokenFor } from '../../interaction/csrf.js';
import type { SsoSession } from '../../interaction/sso-session-repository.js';
import {
  finishPasskeyRegistration,
  passkeyNameOf,
  REGISTRATION_FAILED,
  startPasskeyRegistration,
} from '../../mfa/passkey-registration.js';
import type { StoredPasskey } from '../../mfa/passkey-repository.js';
import {
  authenticationOptions,
  type CeremonyFailure,
  parseCredentialJson,
  signedChallengeOf,
  verifyAuthentication,
} from '../../mfa/webauthn.js';
import type { CeremonyBinding } from '../../mfa/webauthn-challenges.js';
import { html, type SafeHtml } from '../../pages/html.js';
import { renderEnrolPasskeyPage, renderPasskeySignInPage } from '../../pages/passkey.js';
import { sendHtml } from '../../pages/respond.js';
import { recoveryCodesSender } from './enrol.js';
import type { InteractionRoutesOptions } from './options.js';
import { type InteractionSteps, type LoadedInteraction, stringField } from './steps.js';

/**
 * What the passkey page does for this interaction: the whole sign-in with a discoverable
 * credential (no username typed), or the second factor after the password.
 */
type PasskeyStep =
  | { kind: 'sign-in' }
  | { kind: 'second-factor'; session: SsoSession; user: User; passkeyOnly: boolean };

/** Every failure reads the same: which check failed goes to the audit log only. */
const PASSKEY_FAILED = 'passkey.failed' satisfies MessageKey;

/**
 * §5.5 options for a sign-in of this interaction (any discoverable credential when `sub` is null),
 * their challenge sealed for this browser, interaction and user (nothing is written), and the CSRF
 * token of the form that posts the assertion to the passkey page: the passkey page itself and the
 * login page's passkey button.
 */
export async function issueAuthenticationCeremony(
  options: Pick<InteractionRoutesOptions, 'webauthnChallenges' | 'relyingParty'>,
  loaded: LoadedInteraction,
  sub: string | null,
  allowed: Parameters<typeof authenticationOptions>[1],
) {
  const binding: CeremonyBinding = {
    browserKey: loaded.browserKey,
    purpose: 'authenticate',
    boundTo: loaded.interaction.id,
  };
  const challenge = options.webauthnChallenges.seal(binding, sub);
  const ceremony = await authenticationOptions(options.relyingParty, allowed, challenge);
  return { options: ceremony, csrfToken: csrfTokenFor(loaded.browserKey, 'passkey', loaded.interaction.id) };
}

/**
 * Passkeys inside an interaction (README "Passkeys"): `/interaction/:id/passkey` signs in with a
 * passkey (WebAuthn L3 §7.2), `/interaction/:id/enrol-passkey` creates one when the sign-in
 * requires a factor the user does not have yet (§7.1). The challenge of each ceremony is bound to
 * this browser and this interaction and used once: sealed for a sign-in, stored for an enrolment.
 */
export function registerPasskeyRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): void {
  const { passkeys, webauthnChallenges: challenges, relyingParty: rp, pageContext } = options;
  const bindingOf = (loaded: LoadedInteraction, purpose: CeremonyBinding['purpose']): CeremonyBinding => ({
    browserKey: loaded.browserKey,
    purpose,
    boundTo: loaded.interaction.id,
  });

  /** The step the passkey page serves, or `null` after sending the browser where it is. */
  async function passkeyStepOf(reply: FastifyReply, loaded: LoadedInteraction): Promise<PasskeyStep | null> {
    const session = await loaded.session();
    const progress = steps.progressOf(loaded.interaction);
    const step = await options.flow.nextStep(
      loaded.purpose.requirements,
      session,
      progress,
      loaded.signInSubject,
    );
    if (step.kind === 'login') return { kind: 'sign-in' };
    if (step.kind === 'otp' && session !== null && (await passkeys.hasAny(step.user.sub))) {
      return { kind: 'second-factor', session, user: step.user, passkeyOnly: step.passkeyOnly };
    }
    await steps.proceed(reply, loaded, session, progress);
    return null;
  }

  /** The other ways on from the passkey page. */
  async function alternativesOf(
    loaded: LoadedInteraction,
    step: PasskeyStep,
    t: Translator,
  ): Promise<SafeHtml> {
    const url = (page: 'login' | 'otp' | 'recovery') => steps.pageUrl(loaded.interaction, page);
    if (step.kind === 'sign-in') {
      return html`<p><a href="${url('login')}">${t.text('passkey.usePassword')}</a></p>`;
    }
    // Only a passkey reaches the level asked for: no other way is offered.
    if (step.passkeyOnly) return html``;
    const hasApp = await options.totp.hasConfirmed(step.user.sub);
    return html`${hasApp ? html`<p><a href="${url('otp')}" data-link="otp">${t.text('passkey.useApp')}</a></p>` : null}
<p><a href="${url('recovery')}" data-link="recovery-code">${t.text('otp.useRecoveryCode')}</a></p>`;
  }

  /** §5.5 options for this step, their challenge held server-side, and the page that runs them. */
  async function sendSignInPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    step: PasskeyStep,
    status = 200,
    errorMessage?: string,
  ) {
    const user = step.kind === 'second-factor' ? step.user : null;
    const allowed = user === null ? [] : await passkeys.credentialsOf(user.sub);
    const page = renderPasskeySignInPage({
      form: await issueAuthenticationCeremony(options, loaded, user?.sub ?? null, allowed),
      clientName: loaded.purpose.client.clientName,
      secondFactor: user !== null,
      errorMessage,
      basePath: pageContext.basePath,
      links: await alternativesOf(loaded, step, reply.request.language),
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  /**
   * Checks before the signature: the signed challenge was sealed for this browser, interaction and
   * step and is now spent, the response names a registered credential (§7.2 step 6), and, after the
   * password, one of the signed-in user's (§7.2 step 6: "verify that the identified user is the
   * owner").
   */
  function precheck(
    spent: boolean,
    passkey: StoredPasskey | null,
    step: PasskeyStep,
  ): CeremonyFailure | null {
    if (passkey === null) return 'unknown_credential';
    const expectedSub = step.kind === 'second-factor' ? step.user.sub : null;
    if (expectedSub !== null && passkey.sub !== expectedSub) return 'wrong_user';
    return spent ? null : 'malformed';
  }

  /**
   * Spends the challenge the response signed, whatever follows: a challenge answers one assertion
   * (§13.4.3), even one whose signature then fails. `null` when there is no challenge to spend.
   */
  async function spendSignedChallenge(
    loaded: LoadedInteraction,
    step: PasskeyStep,
    response: AuthenticationResponseJSON | null,
  ): Promise<string | null> {
    const challenge = response === null ? null : signedChallengeOf(response);
    if (challenge === null) return null;
    const sub = step.kind === 'second-factor' ? step.user.sub : null;
    const spent = await challenges.spendSealed(bindingOf(loaded, 'authenticate'), sub, challenge);
    return spent ? challenge : null;
  }

  /** A refused assertion: audited as a failed sign-in or a failed second factor, the page again. */
  function refuse(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    step: PasskeyStep,
    failure: { reason: string; passkey: StoredPasskey | null; detail?: string },
  ) {
    const event = step.kind === 'sign-in' ? AUDIT_EVENTS.loginFailed : AUDIT_EVENTS.factorFailed;
    const sub = step.kind === 'second-factor' ? step.user.sub : failure.passkey?.sub;
    audit(request.log, event, {
      ...(sub ? { sub } : {}),
      method: 'passkey',
      reason: failure.reason,
      ...(failure.passkey ? { credential_id: failure.passkey.id } : {}),
      client_id: loaded.purpose.client.clientId,
      ip: request.ip,
    });
    if (failure.detail) request.log.info({ detail: failure.detail }, 'passkey assertion refused');
    return sendSignInPage(reply, loaded, step, 401, reply.request.language.text(PASSKEY_FAILED));
  }

  /** A verified assertion: the session starts with the passkey, or adds it after the password. */
  async function accept(
    request: FastifyRequest,
    reply: FastifyReply,
    loaded: LoadedInteraction,
    step: PasskeyStep,
    used: { passkey: StoredPasskey; userVerified: boolean; synced: boolean },
  ) {
    const { passkey, userVerified, synced } = used;
    const fields = {
      sub: passkey.sub,
      method: 'passkey',
      credential_id: passkey.id,
      client_id: loaded.purpose.client.clientId,
      ip: request.ip,
    };
    if (step.kind === 'second-factor') {
      audit(request.log, AUDIT_EVENTS.factorSucceeded, fields);
      const method = { method: 'passkey' as const, userVerified, synced };
      const stepped = await app.ssoSessions.addMethod(reply, step.session, method);
      return steps.proceed(reply, loaded, stepped, steps.progressOf(loaded.interaction));
    }
    // A disabled or removed user's credential no longer signs anyone in.
    const user = await options.stores.users.findUserBySub(passkey.sub);
    if (user === null) return refuse(request, reply, loaded, step, { reason: 'unknown_user', passkey });
    audit(request.log, AUDIT_EVENTS.loginSucceeded, fields);
    return steps.signedIn(request, reply, loaded, user, 'passkey', { userVerified, synced });
  }

  app.get<{ Params: { id: string } }>(
    interactionPagePath('passkey'),
    { config: { interaction: {} } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const step = await passkeyStepOf(reply, loaded);
      if (step === null) return reply;
      return sendSignInPage(reply, loaded, step);
    },
  );

  // No lockout here, unlike passwords and codes: an assertion is a signature over a fresh
  // challenge (WebAuthn §13.4.1), which trying cannot guess.
  app.post<{ Params: { id: string } }>(
    interactionPagePath('passkey'),
    { config: { interaction: { csrf: 'passkey' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const step = await passkeyStepOf(reply, loaded);
      if (step === null) return reply;
      const response = parseCredentialJson<AuthenticationResponseJSON>(
        stringField(request.body, 'credential') ?? '',
      );
      const challenge = await spendSignedChallenge(loaded, step, response);
      const passkey = response === null ? null : await passkeys.find(response.id);
      const problem = response === null ? 'malformed' : precheck(challenge !== null, passkey, step);
      if (problem !== null || challenge === null || response === null || passkey === null) {
        return refuse(request, reply, loaded, step, { reason: problem ?? 'malformed', passkey });
      }
      const outcome = await verifyAuthentication(rp, response, challenge, passkey);
      if (!outcome.ok) return refuse(request, reply, loaded, step, { ...outcome, passkey });
      // §6.1.1: of two assertions racing with the same counter, only one is recorded.
      if (!(await passkeys.recordUse(passkey, { counter: outcome.counter, backedUp: outcome.backedUp }))) {
        return refuse(request, reply, loaded, step, { reason: 'counter', passkey });
      }
      return accept(request, reply, loaded, step, {
        passkey,
        userVerified: outcome.userVerified,
        synced: outcome.backedUp,
      });
    },
  );

  registerEnrolPasskeyRoutes(app, steps, options);
}

/**
 * Creating a passkey inside a sign-in, when the sign-in requires a factor the user has none of
 * (the same condition as the authenticator-app enrolment page; `passkeyOnly` leads here).
 */
function registerEnrolPasskeyRoutes(
  app: FastifyInstance,
  steps: InteractionSteps,
  options: InteractionRoutesOptions,
): void {
  const { passkeys, webauthnChallenges: challenges, relyingParty: rp, pageContext } = options;
  const registration = { passkeys, challenges, rp };
  const sendRecoveryCodesOnce = recoveryCodesSender(steps, options);
  const bindingOf = (loaded: LoadedInteraction): CeremonyBinding => ({
    browserKey: loaded.browserKey,
    purpose: 'register',
    boundTo: loaded.interaction.id,
  });

  async function sendEnrolPage(
    reply: FastifyReply,
    loaded: LoadedInteraction,
    user: User,
    status = 200,
    error?: string,
  ) {
    const ceremony = await startPasskeyRegistration(registration, bindingOf(loaded), user);
    const t = reply.request.language;
    const page = renderEnrolPasskeyPage({
      form: { options: ceremony, csrfToken: csrfTokenFor(loaded.browserKey, 'enrol', loaded.interaction.id) },
      name: 'Passkey',
      lead: t.text('enrol.leadSecondStep', { client: loaded.purpose.client.clientName }),
      errorMessage: error,
      basePath: pageContext.basePath,
      links: html`<p><a href="${steps.pageUrl(loaded.interaction, 'enrol')}">${t.text('enrol.setUpAppInstead')}</a></p>`,
      language: pageLanguageOf(reply.request),
    });
    return sendHtml(reply, status, page, { formActionSources: loaded.purpose.formActionSources });
  }

  app.get<{ Params: { id: string } }>(
    interactionPagePath('enrol-passkey'),
    { config: { interaction: {} } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const current = await steps.sessionAtStep(reply, loaded, 'enrol');
      if (current === null) return reply;
      return sendEnrolPage(reply, loaded, current.user);
    },
  );

  app.post<{ Params: { id: string } }>(
    interactionPagePath('enrol-passkey'),
    { config: { interaction: { csrf: 'enrol' } } },
    async (request, reply) => {
      const loaded = steps.loaded(request);
      const current = await steps.sessionAtStep(reply, loaded, 'enrol');
      if (current === null) return reply;
      const { user, session } = current;
      const name = passkeyNameOf(stringField(request.body, 'name') ?? '');
      const credential = stringField(request.body, 'credential') ?? '';
      const outcome = await finishPasskeyRegistration(
        registration,
        bindingOf(loaded),
        user.sub,
        credential,
        name,
      );
      if (!outcome.ok) {
        request.log.info({ reason: outcome.reason, detail: outcome.detail }, 'passkey registration refused');
        return sendEnrolPage(reply, loaded, user, 400, REGISTRATION_FAILED);
      }
      audit(request.log, AUDIT_EVENTS.factorEnrolled, {
        sub: user.sub,
        method: 'passkey',
        credential_id: outcome.credentialId,
        client_id: loaded.purpose.client.clientId,
      });
      // The new credential's attestation proved possession: it completes this sign-in's second factor.
      const method = {
        method: 'passkey' as const,
        userVerified: outcome.userVerified,
        synced: outcome.synced,
      };
      const stepped = await app.ssoSessions.addMethod(reply, session, method);
      if (await options.recoveryCodes.hasSet(user.sub)) {
        return steps.proceed(reply, loaded, stepped, steps.progressOf(loaded.interaction));
      }
      return sendRecoveryCodesOnce(reply, loaded, user.sub);
    },
  );
}
