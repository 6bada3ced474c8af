import type { FastifyInstance } from 'fastify';
import { type AuditEventFilter, InvalidAuditCursorError } from '../../audit/audit-event-store.js';
import { AUDIT_EVENTS } from '../../audit.js';
import { type AuditLogFilters, renderAuditLogPage } from '../../pages/admin/audit-log.js';
import type { PageContext } from '../authorization-reply.js';
import { consolePath, consoleReplies, queryText } from './replies.js';

const EVENT_NAMES: readonly string[] = Object.values(AUDIT_EVENTS).sort();

/** `YYYY-MM-DD` (UTC) as seconds since the epoch; `undefined` when empty, `null` when not a date. */
function dayStart(text: string): number | undefined | null {
  if (text === '') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
  const millis = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(millis) ? null : millis / 1000;
}

/** The store's filter from the form's; `invalid` when a field could not be read (it is left out). */
function filterOf(filters: AuditLogFilters, cursor: string, limit: number) {
  const since = dayStart(filters.since);
  const until = dayStart(filters.until);
  const event = filters.event === '' || EVENT_NAMES.includes(filters.event) ? filters.event : null;
  const filter: AuditEventFilter = {
    limit,
    ...(filters.sub ? { sub: filters.sub } : {}),
    ...(filters.client_id ? { clientId: filters.client_id } : {}),
    ...(event ? { event } : {}),
    ...(typeof since === 'number' ? { since } : {}),
    // "Before" a day includes that day: the store's `until` is exclusive.
    ...(typeof until === 'number' ? { until: until + 86_400 } : {}),
    ...(cursor ? { cursor } : {}),
  };
  return { filter, invalid: since === null || until === null || event === null };
}

/**
 * The audit log: stored audit events (src/audit/), newest first, filtered by subject, client,
 * event and day, a page at a time by the store's cursor (keyset: as fast at the millionth row).
 */
export function registerAuditLogPage(
  app: FastifyInstance,
  options: { pageContext: PageContext; pageSize: number },
) {
  const { contextOf, send } = consoleReplies(options.pageContext);
  app.get(consolePath('/audit'), { config: { console: 'page' } }, async (request, reply) => {
    const filters: AuditLogFilters = {
      sub: queryText(request.query, 'sub'),
      client_id: queryText(request.query, 'client_id'),
      event: queryText(request.query, 'event'),
      since: queryText(request.query, 'since'),
      until: queryText(request.query, 'until'),
    };
    const cursor = queryText(request.query, 'cursor');
    const { filter, invalid } = filterOf(filters, cursor, options.pageSize);
    let page: Awaited<ReturnType<typeof app.auditEvents.query>>;
    let badCursor = false;
    try {
      page = await app.auditEvents.query(filter);
    } catch (error) {
      if (!(error instanceof InvalidAuditCursorError)) throw error;
      badCursor = true;
      page = await app.auditEvents.query({ ...filter, cursor: undefined } as AuditEventFilter);
    }
    const body = renderAuditLogPage(contextOf(request), {
      filters,
      eventNames: EVENT_NAMES,
      events: page.events,
      nextCursor: page.nextCursor,
      cursor: badCursor ? '' : cursor,
      invalid: invalid || badCursor,
    });
    return send(reply, body);
  });
}
