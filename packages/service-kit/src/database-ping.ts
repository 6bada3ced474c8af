import { DatabaseUnavailableError } from './database-unavailable.js';

/** `select 1` answered within `timeoutMs`, else DatabaseUnavailableError (both drivers' `ping`). */
export async function pingDatabase(selectOne: () => Promise<unknown>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseUnavailableError(`database did not answer select 1 within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([selectOne(), deadline]);
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) throw error;
    throw new DatabaseUnavailableError(`database did not answer select 1: ${describeCause(error)}`, {
      cause: error,
    });
  } finally {
    clearTimeout(timer);
  }
}

/** Drizzle wraps driver errors ("Failed query: …"); the driver's own message is the useful one. */
function describeCause(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  if (current instanceof AggregateError && current.errors[0] instanceof Error) current = current.errors[0];
  return current instanceof Error ? current.message || current.name : String(current);
}
