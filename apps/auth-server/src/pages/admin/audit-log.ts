import type { StoredAuditEvent } from '../../audit/audit-event-store.js';
import { html } from '../html.js';
import { renderConsolePage, table, when } from './frame.js';
import { type ConsolePageContext, consoleRoot } from './pages.js';
import { CONSOLE_WORDS } from './words.js';

const W = CONSOLE_WORDS;

/** The filters as typed (strings, so the form shows them back); dates are `YYYY-MM-DD`, UTC. */
export interface AuditLogFilters {
  sub: string;
  client_id: string;
  event: string;
  since: string;
  until: string;
}

export interface AuditLogInput {
  filters: AuditLogFilters;
  /** The event names the filter offers (AUDIT_EVENTS). */
  eventNames: readonly string[];
  events: readonly StoredAuditEvent[];
  /** The cursor of the next (older) page, if any. */
  nextCursor: string | undefined;
  /** The cursor of this page (empty on the first). */
  cursor: string;
  /** A filter that could not be read was left out. */
  invalid: boolean;
}

const textField = (name: keyof AuditLogFilters, label: string, value: string, type = 'text') =>
  html`<div class="field"><label for="audit-${name}">${label}</label><input type="${type}" id="audit-${name}" name="${name}" value="${value}" autocomplete="off"></div>`;

function filterForm(context: ConsolePageContext, input: AuditLogInput) {
  const { filters } = input;
  const options = input.eventNames.map(
    (name) =>
      html`<option value="${name}"${name === filters.event ? html` selected` : null}>${name}</option>`,
  );
  return html`<form method="get" action="${consoleRoot(context)}/audit" class="console-search audit-filters" aria-label="${W.audit.filters}">
${textField('sub', W.audit.sub, filters.sub)}
${textField('client_id', W.audit.clientId, filters.client_id)}
<div class="field"><label for="audit-event">${W.audit.event}</label><select id="audit-event" name="event"><option value="">${W.audit.eventAny}</option>${options}</select></div>
${textField('since', W.audit.since, filters.since, 'date')}
${textField('until', W.audit.until, filters.until, 'date')}
<button type="submit" class="primary">${W.audit.apply}</button></form>`;
}

/** Stored audit events, newest first, filtered by subject, client, event and time; older pages by cursor. */
export function renderAuditLogPage(context: ConsolePageContext, input: AuditLogInput) {
  const root = consoleRoot(context);
  const rows = input.events.map(
    (
      event,
    ) => html`<tr data-event="${event.event}"><td>${when(event.time)}</td><td><code>${event.event}</code></td>
<td>${event.sub ? html`<a href="${root}/users/${encodeURIComponent(event.sub)}"><code>${event.sub}</code></a>` : W.time.dash}</td>
<td>${event.clientId ?? W.time.dash}</td><td>${event.ip ?? W.time.dash}</td>
<td data-actor>${event.actor ?? W.time.dash}</td><td>${W.audit.outcomes[event.outcome] ?? event.outcome}</td></tr>`,
  );
  const query = (cursor?: string) =>
    `${root}/audit?${new URLSearchParams({ ...input.filters, ...(cursor ? { cursor } : {}) }).toString()}`;
  const paging =
    input.cursor === '' && input.nextCursor === undefined
      ? null
      : html`<nav class="pager" aria-label="${W.paging.label}">
${input.cursor === '' ? null : html`<a href="${query()}">${W.paging.first}</a>`}
${input.nextCursor === undefined ? null : html`<a href="${query(input.nextCursor)}" rel="next">${W.paging.next}</a>`}
</nav>`;
  const headers = [
    W.audit.time,
    W.audit.event,
    W.audit.sub,
    W.audit.clientId,
    W.audit.ip,
    W.audit.actor,
    W.audit.outcome,
  ];
  const body = html`${filterForm(context, input)}
${input.invalid ? html`<p class="alert" role="alert">${W.audit.invalidFilter}</p>` : null}
${input.events.length === 0 ? html`<p>${W.audit.none}</p>` : table(W.titles.audit, headers, rows)}
${paging}`;
  return renderConsolePage({ ...context, title: W.titles.audit, section: 'audit', body });
}
