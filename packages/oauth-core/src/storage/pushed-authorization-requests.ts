/** A pushed authorization request (RFC 9126), stored under the hash of its `request_uri`. */
export interface PushedAuthorizationRequest {
  /** `hashToken(request_uri)`: the request_uri itself is never stored. */
  requestUriHash: string;
  clientId: string;
  /** The validated authorization parameters, single-valued (RFC 8707 `resource` apart). */
  params: Readonly<Record<string, string>>;
  resources: readonly string[];
  createdAt: number;
  expiresAt: number;
}

/** RFC 9126 §2.2 / §4: pushed requests, single use, short-lived. */
export interface PushedAuthorizationRequestStore {
  savePushedAuthorizationRequest(request: PushedAuthorizationRequest): Promise<void>;
  /**
   * Removes and returns the request if and only if it exists, belongs to `clientId` and has not
   * expired at `now`, atomically across processes (`DELETE … WHERE … RETURNING`): of concurrent
   * callers exactly one gets it, and no later call finds it. Otherwise `null`, and a request of
   * another client stays where it is.
   */
  consumePushedAuthorizationRequest(
    requestUriHash: string,
    clientId: string,
    now: number,
  ): Promise<PushedAuthorizationRequest | null>;
  /** Housekeeping: deletes requests with `expiresAt <= now`; returns how many went. */
  deleteExpiredPushedAuthorizationRequests(now: number): Promise<number>;
}
