import type { FastifyReply } from 'fastify';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

/**
 * A plain HTML page for sign-in failures a person sees in the browser (the callback is a form
 * post, so JSON would be shown raw). No script, no styles, no framing, never cached.
 */
export function sendErrorPage(
  reply: FastifyReply,
  statusCode: number,
  page: { title: string; message: string },
): FastifyReply {
  return sendPage(
    reply,
    statusCode,
    page.title,
    `<p>${escapeHtml(page.message)}</p>
<p><a href="/">Try again</a></p>`,
  );
}

/**
 * Issue 13 item 5: a sign-out asked for by another site is a question, not a sign-out. The button
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
    'Sign out?',
    `<p>Another site asked to sign you out of the orders application.</p>
<form method="post" action="${escapeHtml(action)}">
<input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}">
<button type="submit" name="confirm" value="sign-out">Sign out</button>
</form>
<p><a href="/app">Stay signed in</a></p>`,
    // The form's POST redirects on to the provider's end-session endpoint; CSP form-action applies
    // to that redirect too, so the provider's origin is allowed beside this one.
    providerOrigin === undefined ? [] : [providerOrigin],
  );
}

/** Where the provider sends the browser after sign-out (the post_logout_redirect_uri). */
export function sendSignedOutPage(reply: FastifyReply, message: string): FastifyReply {
  return sendPage(
    reply,
    200,
    'Signed out',
    `<p data-signed-out="true">${escapeHtml(message)}</p>
<p><a href="/login?returnUrl=/app">Sign in again</a></p>`,
  );
}

function sendPage(
  reply: FastifyReply,
  statusCode: number,
  title: string,
  body: string,
  formTargets: string[] = [],
): FastifyReply {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>
`;
  return reply
    .code(statusCode)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      `default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action ${["'self'", ...formTargets].join(' ')}`,
    )
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(html);
}
