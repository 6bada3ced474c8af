/**
 * Single-use JWT ids already seen, so a captured JWT cannot be replayed while it would still be
 * accepted: DPoP proofs (RFC 9449 §11.1, keyed by key thumbprint and `jti`) and client assertions
 * (RFC 7523 §3 item 7, keyed by client and `jti`). Callers scope their keys so they never collide.
 * Shared by every server instance (a database table), because a replay may arrive at any of them.
 */
export interface JtiReplayStore {
  /**
   * Records `key` (a proof's `jti`, scoped by the caller) as seen until `expiresAt`, if and only if
   * it is not recorded yet: one atomic insert-if-absent across processes
   * (`INSERT … ON CONFLICT DO NOTHING RETURNING`). Returns `true` for the single caller that
   * recorded it and `false` for every later one (a replay), including when the earlier entry has
   * expired but was not yet deleted: a proof that old is refused for its `iat` anyway.
   */
  markUsed(key: string, expiresAt: number): Promise<boolean>;
  /** Housekeeping: deletes the entries with `expiresAt <= now`; returns how many went. */
  deleteExpired(now: number): Promise<number>;
}

/** The DPoP use of the replay store (the name the DPoP code was written with). */
export type DpopReplayStore = JtiReplayStore;
