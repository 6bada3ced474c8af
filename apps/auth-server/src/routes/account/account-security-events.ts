import type { ClientStore } from '@oidc-orders/oauth-core';
import type { AuditEventStore } from '../../audit/audit-event-store.js';
import { type AccountSecurityEvent, SECURITY_EVENT_TEXTS } from '../../pages/account-security-events.js';

/** How many events the account page lists. */
export const ACCOUNT_SECURITY_EVENTS_SHOWN = 10;
/** Read a few more than shown: events the person is not shown (consent, …) are skipped. */
const EVENTS_READ = 50;

/**
 * The person's own recent security events for the account page, newest first, from the stored
 * audit events (src/audit/). An application is named by its registered name.
 */
export async function recentSecurityEvents(
  store: AuditEventStore,
  clients: Pick<ClientStore, 'findClient'>,
  sub: string,
): Promise<AccountSecurityEvent[]> {
  const { events } = await store.query({ sub, limit: EVENTS_READ });
  const shown = events
    .filter((stored) => SECURITY_EVENT_TEXTS[stored.event] !== undefined)
    .slice(0, ACCOUNT_SECURITY_EVENTS_SHOWN);
  const names = await clientNames(
    clients,
    shown.map((stored) => stored.clientId),
  );
  return shown.map((stored) => ({
    time: stored.time,
    event: stored.event,
    ip: stored.ip,
    application: stored.clientId === null ? null : (names.get(stored.clientId) ?? stored.clientId),
    failure: stored.outcome === 'failure',
  }));
}

async function clientNames(
  clients: Pick<ClientStore, 'findClient'>,
  ids: ReadonlyArray<string | null>,
): Promise<Map<string, string>> {
  const unique = [...new Set(ids.filter((id): id is string => id !== null))];
  const found = await Promise.all(
    unique.map(async (id) => [id, (await clients.findClient(id))?.clientName] as const),
  );
  return new Map(found.flatMap(([id, name]) => (name === undefined ? [] : [[id, name] as const])));
}
