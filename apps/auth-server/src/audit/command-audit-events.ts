import { type AuditEvent, type AuditFields, auditLine } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { toAuditEventRecord } from './audit-event-record.js';
import { createDrizzleAuditEventStore } from './drizzle-audit-event-store.js';

/**
 * The audit events of an operator command run on the host (`users …`): each is written to stderr
 * as the server's JSON log line, and stored like the server's events, so the console's audit log
 * shows what was done from the shell too. `written()` waits for the stores before the command
 * closes its database; a failed store only warns (the change is done, its line is written).
 */
export function commandAuditEvents(db: AppDatabase, warn: (line: string) => void) {
  const store = createDrizzleAuditEventStore(db);
  const writes: Promise<void>[] = [];
  return {
    record(event: AuditEvent, fields: AuditFields, nowMs = Date.now()): void {
      process.stderr.write(auditLine(event, fields, nowMs));
      const row = toAuditEventRecord(event, fields, Math.floor(nowMs / 1000));
      writes.push(
        store.record([row]).catch((error: unknown) => {
          warn(
            `the audit event ${event} was not stored: ${error instanceof Error ? error.message : String(error)}`,
          );
        }),
      );
    },
    async written(): Promise<void> {
      await Promise.all(writes);
    },
  };
}
