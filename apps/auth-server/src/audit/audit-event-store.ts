/**
 * Where security events (src/audit.ts) are kept after their log line is written: the console's
 * audit log, the admin API's `GET /admin/api/audit` and the account page's "Recent security
 * events" read them from here. Times are whole seconds since the epoch, as everywhere in the
 * schema.
 */

/** Whether the event records something that happened as asked, or a refusal or failure. */
export type AuditOutcome = 'success' | 'failure';

/** One event as written. */
export interface AuditEventRecord {
  /** Seconds since the epoch. */
  time: number;
  /** An AUDIT_EVENTS value. */
  event: string;
  sub: string | null;
  clientId: string | null;
  ip: string | null;
  /** The operator who acted (admin API, console): their `sub`; null when no operator acted. */
  actor: string | null;
  outcome: AuditOutcome;
  /** The event's other fields, already scrubbed of anything secret-looking (see toAuditEventRecord). */
  details: Record<string, unknown>;
}

/** One event as read back: `id` orders events written in the same second. */
export interface StoredAuditEvent extends AuditEventRecord {
  id: number;
}

/** A page of events, newest first: every filter given must match (AND). */
export interface AuditEventFilter {
  sub?: string;
  clientId?: string;
  event?: string;
  /** Seconds since the epoch, inclusive. */
  since?: number;
  /** Seconds since the epoch, exclusive. */
  until?: number;
  /** `nextCursor` of the previous page: this page continues right after its last event. */
  cursor?: string;
  /** At most this many events (1 to MAX_AUDIT_PAGE_SIZE). */
  limit: number;
}

export interface AuditEventPage {
  /** Newest first (by `time`, then `id`). */
  events: StoredAuditEvent[];
  /** Present when more events match: pass it as `cursor` for the next page. */
  nextCursor?: string;
}

/** The largest page a query returns; a larger `limit` is refused with a RangeError. */
export const MAX_AUDIT_PAGE_SIZE = 500;

/**
 * The contract every implementation keeps:
 * - `record` stores the events in one write; it may reject (the database is down): the caller
 *   (src/audit/audit-event-writer.ts) keeps them and tries again, and never fails a request for it.
 * - `query` answers one page newest first with keyset pagination: a cursor names the last event
 *   of the previous page, so events written meanwhile neither shift nor repeat a page. An invalid
 *   cursor rejects with InvalidAuditCursorError (an API answers 400).
 * - `deleteOlderThan` deletes events with `time` before the given second, in batches, and returns
 *   how many it deleted; several instances may run it at once without waiting on each other.
 */
export interface AuditEventStore {
  record(events: readonly AuditEventRecord[]): Promise<void>;
  query(filter: AuditEventFilter): Promise<AuditEventPage>;
  deleteOlderThan(time: number): Promise<number>;
}

/** A cursor that is not one `query` handed out. */
export class InvalidAuditCursorError extends Error {
  readonly code = 'invalid_cursor';
  constructor() {
    super('invalid audit event cursor');
    this.name = 'InvalidAuditCursorError';
  }
}

/** The position after which the next page starts: the last event of the previous page. */
export interface AuditCursorPosition {
  time: number;
  id: number;
}

/** Opaque to callers: base64url of `time.id`. */
export function encodeAuditCursor(position: AuditCursorPosition): string {
  return Buffer.from(`${position.time}.${position.id}`).toString('base64url');
}

export function decodeAuditCursor(cursor: string): AuditCursorPosition {
  const match = /^(\d{1,15})\.(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) throw new InvalidAuditCursorError();
  return { time: Number(match[1]), id: Number(match[2]) };
}

/** Refuses a page size outside 1..MAX_AUDIT_PAGE_SIZE (a programming error, not a user's). */
export function checkAuditPageSize(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_PAGE_SIZE) {
    throw new RangeError(`audit page size must be 1..${MAX_AUDIT_PAGE_SIZE}, got ${limit}`);
  }
}
