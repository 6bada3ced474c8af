import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { type EmailChange, isEmailAddress } from '../../mail/email-change.js';
import type { EmailVerification } from '../../mail/email-verification.js';
import { changeContextOf } from '../../mail/security-notices.js';
import { renderAccountWayOn } from '../../pages/account-way-on.js';
import { html } from '../../pages/html.js';
import { renderPage } from '../../pages/layout.js';
import { sendHtml } from '../../pages/respond.js';
import type { AccountPerson } from './account-passkeys.js';

type Notice = { kind: 'ok' | 'error'; text: string };

/** What the verification button borrows from the account page (its guard and page). */
export interface AccountEmailDeps<Person extends AccountPerson> {
  verification: EmailVerification;
  change: EmailChange;
  /** The person the area's guard let through (signed in, CSRF token valid, recent where the route says). */
  accountHolder(request: FastifyRequest): Person;
  sendAccountPage(reply: FastifyReply, person: Person, status: number, notice: Notice): Promise<unknown>;
}

/** README "Email": the words a person reads when the mail could not be handed over. */
export const MAIL_NOT_SENT = 'We could not send the message. Please try again in a few minutes.';

/** The words of a refused request past the mail limits (the page also says it with 429). */
export const TOO_MANY_MAILS =
  'Too many messages were sent to that address or from your account. Please try again later.';

/** `POST /account/email/verify`: mails a verification link to the signed-in person's address. */
export function registerAccountEmailRoutes<Person extends AccountPerson>(
  app: FastifyInstance,
  deps: AccountEmailDeps<Person>,
): void {
  app.post('/account/email/verify', { config: { account: 'change' } }, async (request, reply) => {
    const person = deps.accountHolder(request);
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

  // A new address needs a recent sign-in: whoever finds an unlocked browser cannot take the account.
  app.post('/account/email', { config: { account: 'recent-change' } }, async (request, reply) => {
    const person = deps.accountHolder(request);
    const email = String((request.body as Record<string, unknown> | undefined)?.email ?? '').trim();
    if (!isEmailAddress(email)) {
      return deps.sendAccountPage(reply, person, 400, {
        kind: 'error',
        text: 'That is not an e-mail address.',
      });
    }
    const outcome = await deps.change.request(person.user.sub, email, changeContextOf(request));
    // RFC 6585 §4: past the mail limits, 429 with Retry-After, as the forgot-password form answers.
    if (!outcome.sent && 'retryAfterSeconds' in outcome) {
      reply.header('retry-after', String(outcome.retryAfterSeconds));
      return deps.sendAccountPage(reply, person, 429, { kind: 'error', text: TOO_MANY_MAILS });
    }
    if (!outcome.sent)
      return deps.sendAccountPage(reply, person, 503, { kind: 'error', text: MAIL_NOT_SENT });
    // Opening the link changes nothing (mail scanners open links); its page's button does (see below).
    const text =
      'We sent a link to the new address. Your account keeps its current address until you open that link and choose “Use this address”.';
    return deps.sendAccountPage(reply, person, 200, { kind: 'ok', text });
  });
}

const tokenOf = (source: unknown) => {
  const value = (source as Record<string, unknown> | undefined)?.token;
  return typeof value === 'string' ? value : '';
};

/** A mailed link whose page holds one button: GET shows it, only its POST uses the link. */
interface LinkButton {
  path: string;
  title: string;
  lead: string;
  button: string;
  done: { title: string; text: string };
  isUsable(token: string): Promise<boolean>;
  use(token: string): Promise<boolean>;
}

function registerLinkButton(app: FastifyInstance, basePath: string, link: LinkButton): void {
  const invalid = (reply: FastifyReply) => {
    const body = html`<p class="alert" role="alert">This link is no longer valid: it was already used, it expired, or the account changed since.</p>
${renderAccountWayOn(basePath)}`;
    return sendHtml(reply, 400, renderPage({ title: 'Link no longer valid', body, basePath }));
  };
  app.get(link.path, async (request, reply) => {
    const token = tokenOf(request.query);
    if (!(await link.isUsable(token))) return invalid(reply);
    const body = html`<p class="lead">${link.lead}</p>
<form method="post" class="stack"><input type="hidden" name="token" value="${token}">
<button type="submit" class="primary">${link.button}</button></form>`;
    return sendHtml(reply, 200, renderPage({ title: link.title, body, basePath }));
  });
  app.post(link.path, async (request, reply) => {
    if (!(await link.use(tokenOf(request.body)))) return invalid(reply);
    const body = html`<p class="notice" role="status">${link.done.text}</p>
${renderAccountWayOn(basePath)}`;
    return sendHtml(reply, 200, renderPage({ title: link.done.title, body, basePath }));
  });
}

/**
 * The mailed links about the address (README "Email"): verification, confirming a new address,
 * and undoing a change. Opening a link changes nothing (mail scanners open links); only the POST
 * of its page's button uses it up.
 */
export const emailLinkRoutes: FastifyPluginAsync<{
  verification: EmailVerification;
  change: EmailChange;
  basePath: string;
}> = async (app, { verification, change, basePath }) => {
  registerLinkButton(app, basePath, {
    path: '/verify-email',
    title: 'Confirm your address',
    lead: 'Confirm that this address belongs to your account.',
    button: 'Confirm my address',
    done: { title: 'Address verified', text: 'Your address is verified.' },
    isUsable: (token) => verification.isUsable(token),
    use: (token) => verification.confirm(token),
  });
  registerLinkButton(app, basePath, {
    path: '/confirm-email',
    title: 'Use this address',
    lead: 'Use this address for your account from now on.',
    button: 'Use this address',
    done: { title: 'Address changed', text: 'Your account uses the new address from now on.' },
    isUsable: (token) => change.isUsable(token, 'email_change'),
    use: (token) => change.confirm(token),
  });
  registerLinkButton(app, basePath, {
    path: '/undo-email-change',
    title: 'Undo the change of address',
    lead: 'Keep this address for your account and sign out of every session.',
    button: 'Undo it and sign out everywhere',
    done: {
      title: 'Change undone',
      text: 'Your account keeps this address and was signed out everywhere. Change your password if someone else knows it.',
    },
    isUsable: (token) => change.isUsable(token, 'email_change_undo'),
    use: (token) => change.undo(token),
  });
};
