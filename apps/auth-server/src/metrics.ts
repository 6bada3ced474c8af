import { Counter } from 'prom-client';

/**
 * The app's own Prometheus counters, process-wide and registered on each app's registry by
 * src/plugins/metrics.ts (GET /metrics). Label values are bounded: event names come from
 * AUDIT_EVENTS, grant types from the grant registry (counted only after a grant succeeded).
 */
export const auditEventsCounted = new Counter({
  name: 'auth_server_audit_events_total',
  help: 'Audit events by name (README "Audit events"): sign-ins and their failures, refresh-token reuse, …',
  labelNames: ['event'],
  registers: [],
});

export const tokensIssued = new Counter({
  name: 'auth_server_tokens_issued_total',
  help: 'Successful token responses of /token, by grant type',
  labelNames: ['grant_type'],
  registers: [],
});

export const mailsSent = new Counter({
  name: 'auth_server_mails_total',
  help: 'Mails handed to the SMTP server or the dev mailbox (outcome sent), or given up on (failed), by purpose',
  labelNames: ['purpose', 'outcome'],
  registers: [],
});
