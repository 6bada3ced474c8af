/**
 * The service account's own bind backs off after refusals: a wrong `LDAP_BIND_PASSWORD` would
 * otherwise be tried at every sign-in and lock the service account in the directory (Active
 * Directory's lockout threshold is often 5 to 10). After `freeFailures` refusals in a row, no bind
 * is attempted for a pause that doubles with each further refusal, up to `maxPauseSeconds`.
 */
export interface ServiceBindGuard {
  mayBind(): boolean;
  succeeded(): void;
  /** Records a refusal; returns the pause now in force, in seconds (0: none). */
  failed(): number;
}

export function createServiceBindGuard(
  options: {
    freeFailures?: number;
    firstPauseSeconds?: number;
    maxPauseSeconds?: number;
    now?: () => number;
  } = {},
): ServiceBindGuard {
  const freeFailures = options.freeFailures ?? 2;
  const firstPause = options.firstPauseSeconds ?? 30;
  const maxPause = options.maxPauseSeconds ?? 900;
  const now = options.now ?? Date.now;
  let failures = 0;
  let pausedUntil = 0;
  return {
    mayBind: () => now() >= pausedUntil,
    succeeded: () => {
      failures = 0;
      pausedUntil = 0;
    },
    failed: () => {
      failures += 1;
      if (failures <= freeFailures) return 0;
      const pause = Math.min(maxPause, firstPause * 2 ** (failures - freeFailures - 1));
      pausedUntil = now() + pause * 1000;
      return pause;
    },
  };
}
