/** The database could not be opened or migrated at start: one line naming DATABASE_URL. */
export class DatabaseStartError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`DATABASE_URL: ${reason}`, options);
    this.name = 'DatabaseStartError';
  }
}
