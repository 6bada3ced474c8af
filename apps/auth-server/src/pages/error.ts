import { activeTraceIds } from '@oidc-orders/service-kit';
import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { renderAccountWayOn } from './account-way-on.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

export interface ErrorPageInput {
  title: string;
  /** Public text only: never a stack trace or which internal check failed. */
  message: string;
  /** The OAuth error code, shown small for support requests. */
  code?: string;
  basePath: string;
  /** A way on: where to go from here (the client's home, the start page). */
  next?: { href: string; label: string };
  /** The one thing to do, when it is not following a link (replaces the default advice). */
  advice?: string;
  /** Beside the advice, a link to the account page (when no application is known to return to). */
  accountLink?: boolean;
  language?: PageLanguage;
}

/**
 * Shown instead of redirecting when the client or redirect URI cannot be trusted
 * (RFC 6749 §4.1.2.1: "MUST NOT automatically redirect the user-agent to the invalid redirection URI"),
 * and for browser-side failures such as an expired interaction or a missing CSRF token.
 */
export function renderErrorPage(input: ErrorPageInput): string {
  // With tracing on, the trace id: a screenshot of this page leads an operator to the trace.
  const traceId = activeTraceIds()?.trace_id;
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const body = html`<p>${input.message}</p>
${input.code ? html`<p class="muted">${t.html('error.code', { errorCode: input.code })}</p>` : null}
${traceId ? html`<p class="muted">Trace: <code data-trace-id>${traceId}</code></p>` : null}
${
  input.next
    ? html`<p><a class="button" href="${input.next.href}">${input.next.label}</a></p>`
    : html`<p class="muted">${input.advice ?? t.text('error.defaultAdvice')}</p>
${input.accountLink ? renderAccountWayOn(input.basePath, t.text('error.accountPage')) : null}`
}`;
  return renderPage({ title: input.title, body, basePath: input.basePath, language });
}
