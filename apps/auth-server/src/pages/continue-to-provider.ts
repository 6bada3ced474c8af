import { html } from './html.js';
import { renderPage } from './layout.js';

export interface ContinueToProviderPageInput {
  providerName: string;
  /** The provider's authorization request (its authorization endpoint with PKCE, `state`, `nonce`). */
  target: string;
  basePath: string;
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
  const body = html`<p>Taking you to ${input.providerName} to sign in there. When you are back, it is linked to your account.</p>
<p><a id="continue" class="button" href="${input.target}" data-action="continue-to-provider">Continue to ${input.providerName}</a></p>
<p><a href="${input.basePath}/account" data-action="back-to-account">Back to your account</a></p>`;
  return renderPage({
    title: `Linking ${input.providerName}`,
    body,
    basePath: input.basePath,
    refreshTo: input.target,
  });
}
