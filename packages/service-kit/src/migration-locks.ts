import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How a migration shares the tables with the instances still serving (a rolling upgrade applies
 * the next release's migrations while the previous one answers requests).
 *
 * A migration's `ALTER TABLE` waits for an exclusive lock, and every query on that table queues
 * behind it. Two of them in one migration can also deadlock with a query that reads both tables
 * (a join): the migration holds the first table and waits for the second, the query holds the
 * second and waits for the first. PostgreSQL then aborts whichever waiter checks first, after
 * `deadlock_timeout` (1 s by default), and that can be the request.
 *
 * So the migration waits at most `MIGRATION_LOCK_TIMEOUT_MS` for any lock (`lock_timeout`, well
 * under `deadlock_timeout`: it gives way first), rolls back, and tries again after a pause, up to
 * `MIGRATION_LOCK_ATTEMPTS` times. Drizzle applies the pending migrations in one transaction, so an
 * attempt that gave way left nothing behind.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 200;
export const MIGRATION_LOCK_ATTEMPTS = 30;

/** The SQLSTATEs of a migration that gave way: lock_not_available, deadlock_detected. */
const GAVE_WAY = new Set(['55P03', '40P01']);

/** True when `error` (or the driver error Drizzle wraps in `cause`) is a lock timeout or a deadlock. */
export function isLockConflict(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Object && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && GAVE_WAY.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** 50 ms, then doubling to 1 s, with jitter, so two instances starting together do not collide again. */
function pauseBefore(attempt: number): number {
  const base = Math.min(1000, 50 * 2 ** (attempt - 1));
  return base / 2 + Math.random() * (base / 2);
}

/** Runs `attempt` until it succeeds, gives way no more than the allowed times, or fails otherwise. */
export async function retryWhileGivingWay(
  attempt: () => Promise<void>,
  attempts = MIGRATION_LOCK_ATTEMPTS,
): Promise<void> {
  for (let tried = 1; ; tried++) {
    try {
      await attempt();
      return;
    } catch (error) {
      if (!isLockConflict(error) || tried >= attempts) {
        if (isLockConflict(error)) {
          throw new Error(
            `the migrations could not take their table locks in ${attempts} attempts (each waiting at most ${MIGRATION_LOCK_TIMEOUT_MS} ms): long transactions hold the tables; start this instance again when they are done`,
            { cause: error },
          );
        }
        throw error;
      }
      await sleep(pauseBefore(tried));
    }
  }
}
