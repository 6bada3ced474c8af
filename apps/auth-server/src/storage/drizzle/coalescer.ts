/**
 * Coalesced lookups by key: the lookups that arrive before the next turn of the event loop share one
 * statement (`WHERE key = ANY($1)`), so PostgreSQL parses, plans and answers one statement for many
 * requests instead of one each. It is only a shared statement, never a cache: every batch reads the
 * database afresh once its lookups are in, and nothing of its result outlives it, so a revocation
 * committed before a lookup starts is seen by that lookup (RFC 7009 §2: the token is invalid
 * immediately), whichever instance revoked it.
 */

export interface CoalescerOptions<K, V> {
  /** Reads every key of one batch (each key once) and returns the rows found, in any order. */
  readBatch(keys: readonly K[]): Promise<readonly V[]>;
  /** The key a row answers, to match rows to their lookups. */
  keyOf(row: V): K;
  /** Most distinct keys in one statement; a full batch is sent at once. Default 64. */
  maxBatch?: number;
  /**
   * When a partial batch is sent: default `setImmediate`, after the I/O callbacks of the current
   * turn of the event loop, so a lookup waits at most for the requests that arrived with it.
   */
  schedule?: (flush: () => void) => void;
}

export type Coalescer<K, V> = (key: K) => Promise<V | null>;

interface Waiter<V> {
  resolve(row: V | null): void;
  reject(error: unknown): void;
}

/** A lookup function whose concurrent calls are answered by shared batch reads. */
export function createCoalescer<K, V>(options: CoalescerOptions<K, V>): Coalescer<K, V> {
  const maxBatch = options.maxBatch ?? 64;
  const schedule = options.schedule ?? ((flush: () => void) => setImmediate(flush));
  let pending: Map<K, Waiter<V>[]> | undefined;

  const flush = (batch: Map<K, Waiter<V>[]>) => {
    // A batch already sent because it filled up has nothing left to do when its turn comes.
    if (pending !== batch) return;
    pending = undefined;
    void readAndSettle(batch, options);
  };

  return (key) =>
    new Promise<V | null>((resolve, reject) => {
      if (pending === undefined) {
        const batch = new Map<K, Waiter<V>[]>();
        pending = batch;
        schedule(() => flush(batch));
      }
      const batch = pending;
      const waiters = batch.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else batch.set(key, [{ resolve, reject }]);
      if (batch.size >= maxBatch) flush(batch);
    });
}

async function readAndSettle<K, V>(
  batch: Map<K, Waiter<V>[]>,
  options: Pick<CoalescerOptions<K, V>, 'readBatch' | 'keyOf'>,
): Promise<void> {
  let found: Map<K, V>;
  try {
    const rows = await options.readBatch([...batch.keys()]);
    found = new Map(rows.map((row) => [options.keyOf(row), row]));
  } catch (error) {
    // Every lookup of the batch shared the statement, so every one of them failed with it.
    for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
    return;
  }
  for (const [key, waiters] of batch) {
    const row = found.get(key) ?? null;
    for (const waiter of waiters) waiter.resolve(row);
  }
}
