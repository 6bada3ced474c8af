import type { FastifyReply } from 'fastify';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { sendHtml } from './respond.js';

export interface SignedOutPageInput {
  basePath: string;
  /** Front-channel logout URIs of the clients of the ended session (with `iss` and `sid`). */
  frames?: readonly string[];
  /** The verified post-logout redirect (with `state`), reached after the frames have loaded. */
  continueUrl?: string | null;
}

/**
 * OIDC RP-Initiated Logout §3: shown when there is no verified post-logout redirect, or when
 * front-channel logout iframes must load first (Front-Channel Logout 1.0 §3: the OP renders
 * `<iframe src="frontchannel_logout_uri">` for each relying party of the session).
 */
export function renderSignedOutPage(input: SignedOutPageInput): string {
  const frames = input.frames ?? [];
  const continueUrl = input.continueUrl ?? null;
  const body = html`<p>You have been signed out.${continueUrl === null ? ' You can close this window, or go on from the start page.' : ''}</p>
${
  continueUrl === null
    ? html`<p><a class="button" href="${input.basePath}/" data-action="start-page">Go to the start page</a></p>`
    : html`<p><a id="continue" class="button" href="${continueUrl}">Continue</a></p>`
}
${frames.map(
  (uri) =>
    html`<iframe class="frontchannel-logout" src="${uri}" title="Signing out of an application" hidden></iframe>`,
)}`;
  return renderPage({
    title: 'You are signed out',
    body,
    basePath: input.basePath,
    scripts: continueUrl !== null && frames.length > 0 ? ['signed-out.js'] : [],
  });
}

/** The page with a CSP that lets exactly the front-channel URIs' origins be framed. */
export function sendSignedOutPage(reply: FastifyReply, input: SignedOutPageInput) {
  const frameSources = [...new Set((input.frames ?? []).map((uri) => new URL(uri).origin))];
  return sendHtml(reply, 200, renderSignedOutPage(input), { frameSources });
}
