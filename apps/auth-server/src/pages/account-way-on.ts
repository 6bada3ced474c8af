import { html, type SafeHtml } from './html.js';

/**
 * The way on from a page that ends a flow with no application to return to (a mailed link's
 * result, an expired link, a sign-in answer that belongs to no sign-in here): the account page. It
 * asks for a sign-in first when needed, and links back to the application the person came from.
 */
export function renderAccountWayOn(basePath: string, label = 'Go to your account'): SafeHtml {
  return html`<p><a class="button" href="${basePath}/account" data-action="account">${label}</a></p>`;
}
