import type { StoredAuditEvent } from '../../audit/audit-event-store.js';
import { html } from '../html.js';
import { consoleWordsOf, renderConsolePage, table, when, wordFor } from './frame.js';
import { type ConsolePageContext, consoleRoot } from './pages.js';

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
  const t = consoleWordsOf(context);
  const { filters } = input;
  const options = input.eventNames.map(
    (name) =>
      html`<option value="${name}"${name === filters.event ? html` selected` : null}>${name}</option>`,
  );
  return html`<form method="get" action="${consoleRoot(context)}/audit" class="console-search audit-filters" aria-label="${t.text('console.audit.filters')}">
${textField('sub', t.text('console.audit.sub'), filters.sub)}
${textField('client_id', t.text('console.audit.clientId'), filters.client_id)}
<div class="field"><label for="audit-event">${t.text('console.audit.event')}</label><select id="audit-event" name="event"><option value="">${t.text('console.audit.eventAny')}</option>${options}</select></div>
${textField('since', t.text('console.audit.since'), filters.since, 'date')}
${textField('until', t.text('console.audit.until'), filters.until, 'date')}
<button type="submit" class="primary">${t.text('console.audit.apply')}</button></form>`;
}

/** Stored audit events, newest first, filtered by subject, client, event and time; older pages by cursor. */
export function renderAuditLogPage(context: ConsolePageContext, input: AuditLogInput) {
  const t = consoleWordsOf(context);
  const root = consoleRoot(context);
  const rows = input.events.map(
    (
      event,
    ) => html`<tr data-event="${event.event}"><td>${when(t, event.time)}</td><td><code>${event.event}</code></td>
<td>${event.sub ? html`<a href="${root}/users/${encodeURIComponent(event.sub)}"><code>${event.sub}</code></a>` : t.text('console.time.dash')}</td>
<td>${event.clientId ?? t.text('console.time.dash')}</td><td>${event.ip ?? t.text('console.time.dash')}</td>
<td data-actor>${event.actor ?? t.text('console.time.dash')}</td><td>${wordFor(t, 'audit.outcomes', event.outcome)}</td></tr>`,
  );
  const query = (cursor?: string) =>
    `${root}/audit?${new URLSearchParams({ ...input.filters, ...(cursor ? { cursor } : {}) }).toString()}`;
  const paging =
    input.cursor === '' && input.nextCursor === undefined
      ? null
      : html`<nav class="pager" aria-label="${t.text('console.paging.label')}">
${input.cursor === '' ? null : html`<a href="${query()}">${t.text('console.paging.first')}</a>`}
${input.nextCursor === undefined ? null : html`<a href="${query(input.nextCursor)}" rel="next">${t.text('console.paging.next')}</a>`}
</nav>`;
  const headers = [
    t.text('console.audit.time'),
    t.text('console.audit.event'),
    t.text('console.audit.sub'),
    t.text('console.audit.clientId'),
    t.text('console.audit.ip'),
    t.text('console.audit.actor'),
    t.text('console.audit.outcome'),
  ];
  const body = html`${filterForm(context, input)}
${input.invalid ? html`<p class="alert" role="alert">${t.text('console.audit.invalidFilter')}</p>` : null}
${input.events.length === 0 ? html`<p>${t.text('console.audit.none')}</p>` : table(t.text('console.titles.audit'), headers, rows)}
${paging}`;
  return renderConsolePage({ ...context, title: t.text('console.titles.audit'), section: 'audit', body });
}
