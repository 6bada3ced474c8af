import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { pageLanguageOf } from '../../i18n/request-language.js';
import { type EmailChange, isEmailAddress } from '../../mail/email-change.js';
import type { EmailVerification } from '../../mail/email-verification.js';
import { changeContextOf } from '../../mail/security-notices.js';
import { renderAccountWayOn } from '../../pages/account-way-on.js';
import { html, type SafeHtml } from '../../pages/html.js';
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

/** `POST /account/email/verify`: mails a verification link to the signed-in person's address. */
export function registerAccountEmailRoutes<Person extends AccountPerson>(
  app: FastifyInstance,
  deps: AccountEmailDeps<Person>,
): void {
  app.post('/account/email/verify', { config: { account: 'change' } }, async (request, reply) => {
    const person = deps.accountHolder(request);
    const outcome = await deps.verification.send(person.user.sub);
    if (outcome.sent) {
      const text = request.language.text('accountNotice.verificationSent');
      return deps.sendAccountPage(reply, person, 200, { kind: 'ok', text });
    }
    if (outcome.reason === 'already_verified') {
      return deps.sendAccountPage(reply, person, 200, {
        kind: 'ok',
        text: request.language.text('accountNotice.alreadyVerified'),
      });
    }
    if (outcome.reason === 'no_email') {
      return deps.sendAccountPage(reply, person, 400, {
        kind: 'error',
        text: request.language.text('accountNotice.noAddress'),
      });
    }
    // RFC 9110 §15.6.4: the mail relay is unavailable; the page says so in words.
    return deps.sendAccountPage(reply, person, 503, {
      kind: 'error',
      text: request.language.text('accountNotice.mailNotSent'),
    });
  });

  // A new address needs a recent sign-in: whoever finds an unlocked browser cannot take the account.
  app.post('/account/email', { config: { account: 'recent-change' } }, async (request, reply) => {
    const person = deps.accountHolder(request);
    const email = String((request.body as Record<string, unknown> | undefined)?.email ?? '').trim();
    if (!isEmailAddress(email)) {
      return deps.sendAccountPage(reply, person, 400, {
        kind: 'error',
        text: request.language.text('accountNotice.notAnAddress'),
      });
    }
    const outcome = await deps.change.request(person.user.sub, email, changeContextOf(request));
    // RFC 6585 §4: past the mail limits, 429 with Retry-After, as the forgot-password form answers.
    if (!outcome.sent && 'retryAfterSeconds' in outcome) {
      reply.header('retry-after', String(outcome.retryAfterSeconds));
      return deps.sendAccountPage(reply, person, 429, {
        kind: 'error',
        text: request.language.text('accountNotice.tooManyMails'),
      });
    }
    if (!outcome.sent)
      return deps.sendAccountPage(reply, person, 503, {
        kind: 'error',
        text: request.language.text('accountNotice.mailNotSent'),
      });
    // Opening the link changes nothing (mail scanners open links); its page's button does (see below).
    const text = request.language.text('accountNotice.changeSent');
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
  /** Its words: `emailLink.<words>.title`, `.lead`, `.button`, `.doneTitle` and `.done` in the catalogues. */
  words: 'verify' | 'change' | 'undo';
  isUsable(token: string): Promise<boolean>;
  use(token: string): Promise<boolean>;
}

function registerLinkButton(app: FastifyInstance, basePath: string, link: LinkButton): void {
  const page = (request: FastifyRequest, title: string, body: SafeHtml) =>
    renderPage({ title, body, basePath, language: pageLanguageOf(request) });
  const invalid = (request: FastifyRequest, reply: FastifyReply) => {
    const t = request.language;
    const body = html`<p class="alert" role="alert">${t.text('emailLink.invalid')}</p>
${renderAccountWayOn(basePath, t.text('wayOn.account'))}`;
    return sendHtml(reply, 400, page(request, t.text('emailLink.invalidTitle'), body));
  };
  const words = `emailLink.${link.words}` as const;
  app.get(link.path, async (request, reply) => {
    const t = request.language;
    const token = tokenOf(request.query);
    if (!(await link.isUsable(token))) return invalid(request, reply);
    const body = html`<p class="lead">${t.text(`${words}.lead`)}</p>
<form method="post" class="stack"><input type="hidden" name="token" value="${token}">
<button type="submit" class="primary">${t.text(`${words}.button`)}</button></form>`;
    return sendHtml(reply, 200, page(request, t.text(`${words}.title`), body));
  });
  app.post(link.path, async (request, reply) => {
    const t = request.language;
    if (!(await link.use(tokenOf(request.body)))) return invalid(request, reply);
    const body = html`<p class="notice" role="status">${t.text(`${words}.done`)}</p>
${renderAccountWayOn(basePath, t.text('wayOn.account'))}`;
    return sendHtml(reply, 200, page(request, t.text(`${words}.doneTitle`), body));
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
    words: 'verify',
    isUsable: (token) => verification.isUsable(token),
    use: (token) => verification.confirm(token),
  });
  registerLinkButton(app, basePath, {
    path: '/confirm-email',
    words: 'change',
    isUsable: (token) => change.isUsable(token, 'email_change'),
    use: (token) => change.confirm(token),
  });
  registerLinkButton(app, basePath, {
    path: '/undo-email-change',
    words: 'undo',
    isUsable: (token) => change.isUsable(token, 'email_change_undo'),
    use: (token) => change.undo(token),
  });
};
