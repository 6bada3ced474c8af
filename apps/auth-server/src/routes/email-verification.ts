import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { EmailVerification } from '../mail/email-verification.js';
import { html } from '../pages/html.js';
import { renderPage } from '../pages/layout.js';
import { sendHtml } from '../pages/respond.js';
import type { AccountPerson } from './account-passkeys.js';

type Notice = { kind: 'ok' | 'error'; text: string };

/** What the verification button borrows from the account page (its guard and page). */
export interface AccountEmailDeps<Person extends AccountPerson> {
  verification: EmailVerification;
  authorizedChange(request: FastifyRequest, reply: FastifyReply, sensitive: boolean): Promise<Person | null>;
  sendAccountPage(reply: FastifyReply, person: Person, status: number, notice: Notice): Promise<unknown>;
}

/** README "Email": the words a person reads when the mail could not be handed over. */
export const MAIL_NOT_SENT = 'We could not send the message. Please try again in a few minutes.';

/** `POST /account/email/verify`: mails a verification link to the signed-in person's address. */
export function registerAccountEmailRoutes<Person extends AccountPerson>(
  app: FastifyInstance,
  deps: AccountEmailDeps<Person>,
): void {
  app.post('/account/email/verify', async (request, reply) => {
    const person = await deps.authorizedChange(request, reply, false);
    if (person === null) return reply;
    const outcome = await deps.verification.send(person.user.sub);
    if (outcome.sent) {
      const text = 'We sent a link to your address. Open it within 24 hours to confirm the address.';
      return deps.sendAccountPage(reply, person, 200, { kind: 'ok', text });
    }
    if (outcome.reason === 'already_verified') {
      return deps.sendAccountPage(reply, person, 200, {
        kind: 'ok',
        text: 'Your address is already verified.',
      });
    }
    if (outcome.reason === 'no_email') {
      return deps.sendAccountPage(reply, person, 400, {
        kind: 'error',
        text: 'Your account has no address.',
      });
    }
    // RFC 9110 §15.6.4: the mail relay is unavailable; the page says so in words.
    return deps.sendAccountPage(reply, person, 503, { kind: 'error', text: MAIL_NOT_SENT });
  });
}

const tokenOf = (source: unknown) => {
  const value = (source as Record<string, unknown> | undefined)?.token;
  return typeof value === 'string' ? value : '';
};

/**
 * The mailed verification link: GET shows a button and changes nothing (mail scanners open
 * links); only the POST of that button uses the link up and marks the address verified.
 */
export const emailVerificationRoutes: FastifyPluginAsync<{
  verification: EmailVerification;
  basePath: string;
}> = async (app, { verification, basePath }) => {
  const invalid = (reply: FastifyReply) => {
    const body = html`<p class="alert" role="alert">This link is no longer valid: it was already used, it expired, or the address changed since.</p>`;
    return sendHtml(reply, 400, renderPage({ title: 'Link no longer valid', body, basePath }));
  };

  app.get('/verify-email', async (request, reply) => {
    const token = tokenOf(request.query);
    if (!(await verification.isUsable(token))) return invalid(reply);
    const body = html`<p class="lead">Confirm that this address belongs to your account.</p>
<form method="post" class="stack"><input type="hidden" name="token" value="${token}">
<button type="submit" class="primary">Confirm my address</button></form>`;
    return sendHtml(reply, 200, renderPage({ title: 'Confirm your address', body, basePath }));
  });

  app.post('/verify-email', async (request, reply) => {
    if (!(await verification.confirm(tokenOf(request.body)))) return invalid(reply);
    const body = html`<p class="notice" role="status">Your address is verified.</p>`;
    return sendHtml(reply, 200, renderPage({ title: 'Address verified', body, basePath }));
  });
};
