import type { Clock } from '@oidc-orders/oauth-core';
import fp from 'fastify-plugin';
import { toAuditEventRecord } from '../audit/audit-event-record.js';
import type { AuditEventStore } from '../audit/audit-event-store.js';
import {
  type AuditEventWriter,
  type AuditEventWriterOptions,
  createAuditEventWriter,
} from '../audit/audit-event-writer.js';
import { AUDIT_RETENTION_INTERVAL_MS, deleteExpiredAuditEvents } from '../audit/audit-retention.js';
import { createDrizzleAuditEventStore } from '../audit/drizzle-audit-event-store.js';
import { attachAuditSink } from '../audit.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The stored audit events: the console, the admin API and the account page read them. */
    auditEvents: AuditEventStore;
    /** Writes them in batches; `flush()` waits for the queued ones (tests, shutdown). */
    auditEventWriter: AuditEventWriter;
  }
}

export interface AuditEventsPluginOptions {
  clock: Clock;
  /** Batch size and timings of the writer (tests shorten them). */
  writer?: Omit<AuditEventWriterOptions, 'onWriteError'>;
}

/**
 * Every `audit()` of this app also stores its event (src/audit/): the sink turns it into a row
 * at once, the writer inserts rows in batches off the request path. Each instance deletes events
 * older than AUDIT_RETENTION_DAYS once an hour.
 */
export const auditEventsPlugin = fp<AuditEventsPluginOptions>(
  async (app, options) => {
    const { clock } = options;
    const store = createDrizzleAuditEventStore(app.database.db);
    const writer = createAuditEventWriter(store, {
      ...options.writer,
      onWriteError: (error, queued) =>
        app.log.warn(
          { reason: error instanceof Error ? error.message.split('\n')[0] : String(error), queued },
          'storing audit events failed; they stay queued and are retried',
        ),
    });
    attachAuditSink(app.log, (event, fields) =>
      writer.enqueue(toAuditEventRecord(event, fields, clock.nowSeconds())),
    );
    app.decorate('auditEvents', store);
    app.decorate('auditEventWriter', writer);

    const timer = setInterval(() => {
      deleteExpiredAuditEvents(store, clock.nowSeconds(), app.config.auditRetentionDays).catch((error) =>
        app.log.warn({ err: error }, 'deleting expired audit events failed'),
      );
    }, AUDIT_RETENTION_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await writer.close();
    });
  },
  { name: 'audit-events', fastify: '5.x', dependencies: ['config', 'db'] },
);
