import type { FastifyReply } from 'fastify';
import { escapeHtml, sendPage } from './page.js';

/**
 * A sign-out asked for by another site is a question, not a sign-out. The button
 * POSTs to `/logout` with the session's CSRF token.
 */
export function sendSignOutConfirmation(
  reply: FastifyReply,
  form: { action: string; csrfToken: string; providerOrigin: string | undefined },
): FastifyReply {
  const { action, csrfToken, providerOrigin } = form;
  return sendPage(
    reply,
    200,
    {
      title: 'Sign out?',
      message: 'Another site asked to sign you out of the orders application.',
      html: `<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<button type="submit" class="primary" name="confirm" value="sign-out">Sign out</button>
</form>`,
      actions: [{ href: '/app', label: 'Stay signed in' }],
    },
    // The form's POST redirects on to the provider's end-session endpoint; CSP form-action applies
    // to that redirect too, so the provider's origin is allowed beside this one.
    { formActionSources: providerOrigin === undefined ? [] : [providerOrigin] },
  );
}

/** Where the provider sends the browser after sign-out (the post_logout_redirect_uri). */
export function sendSignedOutPage(reply: FastifyReply, message: string): FastifyReply {
  return sendPage(reply, 200, {
    title: 'Signed out',
    message: '',
    html: `<p data-signed-out="true">${escapeHtml(message)}</p>`,
    actions: [
      { href: '/login?returnUrl=/app', label: 'Sign in again' },
      { href: '/app', label: 'Go to your orders' },
    ],
  });
}
