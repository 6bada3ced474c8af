import { auditEventsDropped, auditEventWriteFailures } from '../metrics.js';
import type { AuditEventRecord, AuditEventStore } from './audit-event-store.js';

export interface AuditEventWriterOptions {
  /** Events per insert. */
  batchSize?: number;
  /** The longest an event waits in memory before its batch is written. */
  flushIntervalMs?: number;
  /** Events kept while the store fails; beyond this the oldest are dropped (and counted). */
  maxQueued?: number;
  /** The longest pause between retries while the store keeps failing. */
  maxRetryDelayMs?: number;
  /** Told about each failed write (the app logs a warning). */
  onWriteError?: (error: unknown, queued: number) => void;
}

/**
 * Stores audit events off the request path: `enqueue` only appends to memory, a timer writes
 * batches. A request never waits for, nor fails because of, the audit table: during an outage the
 * events wait and are retried with growing pauses; only when more are waiting than `maxQueued`, or
 * the instance stops with events unwritten, are the oldest given up, each one counted in
 * `auth_server_audit_events_dropped_total` (their log lines were written either way).
 */
export interface AuditEventWriter {
  enqueue(record: AuditEventRecord): void;
  /** Writes what is queued now; resolves (never rejects) when done or when the store failed. */
  flush(): Promise<void>;
  /** Flushes once more; whatever could not be written is counted as dropped. */
  close(): Promise<void>;
  /** Events waiting to be written. */
  readonly queued: number;
}

const DEFAULTS = { batchSize: 200, flushIntervalMs: 500, maxQueued: 20_000, maxRetryDelayMs: 30_000 };

export function createAuditEventWriter(
  store: AuditEventStore,
  options: AuditEventWriterOptions = {},
): AuditEventWriter {
  const settings = { ...DEFAULTS, ...options };
  const queue: AuditEventRecord[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> | undefined;
  let consecutiveFailures = 0;
  let closed = false;

  function dropOldestBeyond(capacity: number): void {
    const excess = queue.length - capacity;
    if (excess <= 0) return;
    queue.splice(0, excess);
    auditEventsDropped.inc(excess);
  }

  function schedule(): void {
    if (timer || closed) return;
    // Back off while the store fails: 2×, 4×, … the interval, up to maxRetryDelayMs.
    const delay = Math.min(settings.flushIntervalMs * 2 ** consecutiveFailures, settings.maxRetryDelayMs);
    timer = setTimeout(() => {
      timer = undefined;
      void drain();
    }, delay);
    timer.unref();
  }

  async function writeQueued(): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0, settings.batchSize);
      try {
        await store.record(batch);
        consecutiveFailures = 0;
      } catch (error) {
        consecutiveFailures += 1;
        auditEventWriteFailures.inc();
        queue.unshift(...batch);
        dropOldestBeyond(settings.maxQueued);
        settings.onWriteError?.(error, queue.length);
        schedule();
        return;
      }
    }
  }

  function drain(): Promise<void> {
    writing ??= writeQueued().finally(() => {
      writing = undefined;
    });
    return writing;
  }

  function stopTimer(): void {
    clearTimeout(timer);
    timer = undefined;
  }

  async function flush(): Promise<void> {
    stopTimer();
    await drain();
    // Events queued while the last batch was written: one more pass.
    if (queue.length > 0 && consecutiveFailures === 0) await drain();
  }

  return {
    enqueue(record) {
      if (closed) {
        auditEventsDropped.inc();
        return;
      }
      queue.push(record);
      dropOldestBeyond(settings.maxQueued);
      if (queue.length >= settings.batchSize && consecutiveFailures === 0) void drain();
      else schedule();
    },
    flush,
    async close() {
      await flush();
      closed = true;
      stopTimer();
      dropOldestBeyond(0);
    },
    get queued() {
      return queue.length;
    },
  };
}
