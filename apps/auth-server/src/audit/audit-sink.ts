import type { FastifyBaseLogger } from 'fastify';
import type { AuditEvent, AuditFields } from '../audit.js';

/** Receives every audit event of an app as it is written (src/plugins/audit-events.ts stores them). */
export type AuditSink = (event: AuditEvent, fields: AuditFields) => void;

const AUDIT_SINK = Symbol('auditSink');

type LoggerWithSink = FastifyBaseLogger & { [AUDIT_SINK]?: AuditSink };

/**
 * The sink rides on the app's logger: every event site already passes a logger to `audit()` (the
 * request's, or the app's), and a pino child logger (each request's) inherits its parent's
 * properties through its prototype, so every event of this app reaches the sink while another app
 * in the same process (tests) keeps its own. The app's logger is a pino instance even when logging
 * is off (src/app.ts), never Fastify's shared no-op logger.
 */
export function attachAuditSink(log: FastifyBaseLogger, sink: AuditSink): void {
  (log as LoggerWithSink)[AUDIT_SINK] = sink;
}

export function auditSinkOf(log: FastifyBaseLogger): AuditSink | undefined {
  return (log as LoggerWithSink)[AUDIT_SINK];
}
