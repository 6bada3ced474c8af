import { Counter, Gauge } from 'prom-client';
import { type KeyRing, SUPPORTED_SIGNING_ALGS } from './keys/key-ring.js';

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

/**
 * Audit events given up without being stored (src/audit/audit-event-writer.ts): the database
 * refused them for longer than the writer's queue could hold, or the instance stopped first. Their
 * log lines were written; alert when this grows.
 */
export const auditEventsDropped = new Counter({
  name: 'auth_server_audit_events_dropped_total',
  help: 'Audit events not stored in the database (store outage longer than the queue holds, or shutdown); the log line was written',
  registers: [],
});

/** Failed batch writes of audit events (each is retried until the queue overflows). */
export const auditEventWriteFailures = new Counter({
  name: 'auth_server_audit_event_write_failures_total',
  help: 'Batch writes of audit events to the database that failed (retried)',
  registers: [],
});

export const tokensIssued = new Counter({
  name: 'auth_server_tokens_issued_total',
  help: 'Successful token responses of /token, by grant type',
  labelNames: ['grant_type'],
  registers: [],
});

/** Login and other limits that refused a request, by limit (AuditFields `limit`: a closed list). */
export const rateLimitRefusals = new Counter({
  name: 'auth_server_rate_limit_refusals_total',
  help: 'Requests refused by a rate limit, by limit (login_username, login_ip: sign-in lockouts; token_client, …)',
  labelNames: ['limit'],
  registers: [],
});

/**
 * Back-channel logout deliveries that finished, by outcome: `delivered` (2xx), `refused` (the
 * relying party answered a final error, OIDC Back-Channel Logout 1.0 §2.8) or `abandoned` (every
 * attempt failed, or the instance stopped first).
 */
export const backchannelLogoutDeliveries = new Counter({
  name: 'auth_server_backchannel_logout_deliveries_total',
  help: 'Back-channel logout deliveries by outcome: delivered, refused, abandoned',
  labelNames: ['outcome'],
  registers: [],
});

/**
 * Age of the key each algorithm signs with, read from the instance's key ring at scrape time: the
 * "signing key too old" alert says when `keys rotate` is overdue. `keyRing` is undefined until the
 * keys plugin has loaded them.
 */
export function signingKeyAge(keyRing: () => KeyRing | undefined): Gauge {
  return new Gauge({
    name: 'auth_server_signing_key_age_seconds',
    help: 'Seconds since the active signing key of each algorithm was activated',
    labelNames: ['alg'],
    registers: [],
    collect() {
      this.reset();
      for (const alg of SUPPORTED_SIGNING_ALGS) {
        const age = keyRing()?.activeKeyAgeSeconds(alg);
        if (age !== undefined) this.set({ alg }, age);
      }
    },
  });
}
export const mailsSent = new Counter({
  name: 'auth_server_mails_total',
  help: 'Mails handed to the SMTP server or the dev mailbox (outcome sent), or given up on (failed), by purpose',
  labelNames: ['purpose', 'outcome'],
  registers: [],
});
