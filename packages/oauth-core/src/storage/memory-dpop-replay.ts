import type { DpopReplayStore } from './dpop-replay.js';

/** The in-memory twin of `DpopReplayStore` (same contract); for unit tests. */
export function createMemoryDpopReplayStore(): DpopReplayStore {
  const seen = new Map<string, number>();
  return {
    // Check and set with no await in between: atomic on the JS thread.
    async markUsed(key, expiresAt) {
      if (seen.has(key)) return false;
      seen.set(key, expiresAt);
      return true;
    },
    async deleteExpired(now) {
      let deleted = 0;
      for (const [key, expiresAt] of seen) {
        if (expiresAt <= now) {
          seen.delete(key);
          deleted += 1;
        }
      }
      return deleted;
    },
  };
}
