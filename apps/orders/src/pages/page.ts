import { activeTraceIds } from '@oidc-orders/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The pages this service renders itself (sign-in failures, errors, 404) — shaped like `/app`, with
 * its stylesheet and favicon, so a person never meets raw JSON or a bare unstyled page. Other
 * page work (the signed-out and logout-confirmation pages) should use `sendPage` too.
 */
export interface Page {
  title: string;
  /** What happened and what to do, in plain words. Shown first. */
  message: string;
  /** The technical reason (error codes, the failed check): folded away, and also in the log. */
  detail?: string;
  /** Extra markup after the message (a form), already escaped by the caller with `escapeHtml`. */
  html?: string;
  /** Where to go next; the first is the primary button. Defaults to the orders app. */
  actions?: readonly PageAction[];
  /** The request's trace (set by `sendPage` on error pages while tracing is on). */
  traceId?: string;
}

export interface PageAction {
  href: string;
  label: string;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character]!);
}

export const BACK_TO_APP: PageAction = { href: '/app', label: 'Go to your orders' };

/** Only this origin's stylesheet and icon; no script, no framing, forms post here only. */
export function pageCsp(formActionSources: readonly string[] = []): string {
  return `default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action ${["'self'", ...formActionSources].join(' ')}`;
}

export function renderPage(page: Page): string {
  const actions = (page.actions ?? [BACK_TO_APP]).map(
    (action, index) =>
      `<a class="button ${index === 0 ? 'primary' : 'secondary'}" href="${escapeHtml(action.href)}">${escapeHtml(action.label)}</a>`,
  );
  const detail = page.detail
    ? `<details class="detail"><summary>Technical details</summary><p><code>${escapeHtml(page.detail)}</code></p></details>\n`
    : '';
  const trace = page.traceId
    ? `<p class="muted">Trace: <code data-trace-id>${escapeHtml(page.traceId)}</code></p>\n`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(page.title)}</title>
<link rel="icon" href="/app/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app/app.css">
</head>
<body>
<header class="topbar"><a class="brand" href="/app">Orders</a></header>
<main id="main" class="card" aria-labelledby="page-title">
<h1 id="page-title">${escapeHtml(page.title)}</h1>
${page.message ? `<p>${escapeHtml(page.message)}</p>\n` : ''}${page.html ? `${page.html}\n` : ''}${detail}${trace}<p class="actions">${actions.join(' ')}</p>
</main>
</body>
</html>
`;
}

/**
 * Sends a page: never cached (it may describe this browser's sign-in), never framed. An error page
 * (sign-in failures included) names the request's trace while tracing is on, so that a person's
 * screenshot leads an operator to the trace and its log lines.
 */
export function sendPage(
  reply: FastifyReply,
  statusCode: number,
  page: Page,
  options: { formActionSources?: readonly string[] } = {},
): FastifyReply {
  return reply
    .code(statusCode)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', pageCsp(options.formActionSources))
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(renderPage(statusCode >= 400 ? { ...page, traceId: activeTraceIds()?.trace_id } : page));
}

/**
 * Proactive content negotiation (RFC 9110 §12.5.1): a browser's navigation (`Accept: text/html,…`)
 * gets a page; fetch, curl and API clients (`*∕*`, `application/json`) keep the JSON error body,
 * as the first type listed wins ties. Needs `@fastify/accepts` (registered by the error handler).
 */
export function prefersHtml(request: FastifyRequest): boolean {
  return request.accepts().type(['application/json', 'text/html']) === 'text/html';
}
