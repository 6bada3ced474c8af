import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

export interface ContinueToProviderPageInput {
  providerName: string;
  /** The provider's authorization request (its authorization endpoint with PKCE, `state`, `nonce`). */
  target: string;
  basePath: string;
  language?: PageLanguage;
}

/**
 * The answer to the account page's "Link <provider>" POST: a page of this server that goes on to
 * the provider by itself (a meta refresh) and holds the same address as a link.
 *
 * Why not a redirect: CSP `form-action 'self'` (CSP Level 3 §6.4.1) also governs the redirects
 * that follow a form submission (Chromium checks every hop, see ./respond.ts), so a 303 to the
 * provider's origin, directly or through a same-origin hop, is blocked and the button seems to do
 * nothing.
 * Navigating from a page that has loaded is a new navigation, which `form-action` does not govern;
 * and unlike a CSP naming each provider's origin it holds for an authorization endpoint that is
 * discovered later or lives on another origin than the issuer.
 */
export function renderContinueToProviderPage(input: ContinueToProviderPageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const provider = input.providerName;
  const body = html`<p>${t.text('continueToProvider.lead', { provider })}</p>
<p><a id="continue" class="button" href="${input.target}" data-action="continue-to-provider">${t.text('continueToProvider.continue', { provider })}</a></p>
<p><a href="${input.basePath}/account" data-action="back-to-account">${t.text('continueToProvider.back')}</a></p>`;
  return renderPage({
    language,
    title: t.text('continueToProvider.title', { provider }),
    body,
    basePath: input.basePath,
    refreshTo: input.target,
  });
}
