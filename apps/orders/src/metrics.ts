import { Counter } from 'prom-client';

/**
 * The app's own Prometheus counters, process-wide and registered on each app's registry by
 * src/plugins/metrics.ts (GET /metrics). Label values are bounded: event names come from
 * AUDIT_EVENTS.
 */
export const auditEventsCounted = new Counter({
  name: 'orders_audit_events_total',
  help: 'Audit events by name (README "Audit events"): sign-ins and their failures, …',
  labelNames: ['event'],
  registers: [],
});
