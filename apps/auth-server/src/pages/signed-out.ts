import type { FastifyReply } from 'fastify';
import { pageLanguageOf } from '../i18n/request-language.js';
import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { sendHtml } from './respond.js';

export interface SignedOutPageInput {
  basePath: string;
  /** Front-channel logout URIs of the clients of the ended session (with `iss` and `sid`). */
  frames?: readonly string[];
  /** The verified post-logout redirect (with `state`), reached after the frames have loaded. */
  continueUrl?: string | null;
  language?: PageLanguage;
}

/**
 * OIDC RP-Initiated Logout §3: shown when there is no verified post-logout redirect, or when
 * front-channel logout iframes must load first (Front-Channel Logout 1.0 §3: the OP renders
 * `<iframe src="frontchannel_logout_uri">` for each relying party of the session).
 */
export function renderSignedOutPage(input: SignedOutPageInput): string {
  const frames = input.frames ?? [];
  const continueUrl = input.continueUrl ?? null;
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p>${t.text(continueUrl === null ? 'signedOut.closeOrStart' : 'signedOut.done')}</p>
${
  continueUrl === null
    ? html`<p><a class="button" href="${input.basePath}/" data-action="start-page">${t.text('error.startPage')}</a></p>`
    : html`<p><a id="continue" class="button" href="${continueUrl}">${t.text('signedOut.continue')}</a></p>`
}
${frames.map(
  (uri) =>
    html`<iframe class="frontchannel-logout" src="${uri}" title="${t.text('signedOut.frameTitle')}" hidden></iframe>`,
)}`;
  return renderPage({
    language,
    title: t.text('signedOut.title'),
    body,
    basePath: input.basePath,
    scripts: continueUrl !== null && frames.length > 0 ? ['signed-out.js'] : [],
  });
}

/** The page with a CSP that lets exactly the front-channel URIs' origins be framed. */
export function sendSignedOutPage(reply: FastifyReply, input: SignedOutPageInput) {
  const frameSources = [...new Set((input.frames ?? []).map((uri) => new URL(uri).origin))];
  const language = reply.request.languageChoice ? pageLanguageOf(reply.request) : undefined;
  return sendHtml(reply, 200, renderSignedOutPage({ language, ...input }), { frameSources });
}
