/** A pushed authorization request (RFC 9126), stored under the hash of its `request_uri`. */
export interface PushedAuthorizationRequest {
  /** `hashToken(request_uri)`: the request_uri itself is never stored. */
  requestUriHash: string;
  clientId: string;
  /** The validated authorization parameters, single-valued (RFC 8707 `resource` apart). */
  params: Readonly<Record<string, string>>;
  resources: readonly string[];
  createdAt: number;
  /** Until when /authorize may open it (RFC 9126 §2.2 `expires_in`). */
  expiresAt: number;
  /** When the authorization it started issued a code; `null` until then. */
  usedAt: number | null;
}

/**
 * RFC 9126 §2.2 / §4: pushed requests, short-lived, used once. "Used" is the authorization
 * completing (a code issued), not /authorize opening it (RFC 9126 §7.3, FAPI 2.0 SP §5.3.2.2):
 * a reload or a second tab before sign-in shows the login page again.
 */
export interface PushedAuthorizationRequestStore {
  savePushedAuthorizationRequest(request: PushedAuthorizationRequest): Promise<void>;
  /**
   * The request if it exists, belongs to `clientId`, has not expired at `now` and has not been
   * used; otherwise `null`. Reading it spends nothing.
   */
  findPushedAuthorizationRequest(
    requestUriHash: string,
    clientId: string,
    now: number,
  ): Promise<PushedAuthorizationRequest | null>;
  /**
   * Records the use at `now` if and only if the request exists, belongs to `clientId` and is not
   * used yet, atomically across processes (`UPDATE … SET used_at WHERE used_at IS NULL RETURNING`):
   * of concurrent callers exactly one gets `true`. Expiry is not checked here: an authorization
   * opened before `expiresAt` may finish later (its interaction has its own lifetime).
   */
  markPushedAuthorizationRequestUsed(requestUriHash: string, clientId: string, now: number): Promise<boolean>;
  /** Housekeeping: deletes requests with `expiresAt <= before`, used or not; returns how many went. */
  deleteExpiredPushedAuthorizationRequests(before: number): Promise<number>;
}
