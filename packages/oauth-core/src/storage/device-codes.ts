import type { DeviceCode } from '../model.js';

/** What `recordDeviceCodePoll` reports: the state in force before this poll. */
export interface DeviceCodePoll {
  /** The previous poll's time, or `null` when this is the first poll. */
  previousPollAt: number | null;
  /** The polling interval (seconds) the client had to respect. */
  interval: number;
}

/**
 * Device authorizations (RFC 8628). Every state change is one conditional write, atomic across
 * processes, so a decision or a redemption happens at most once however many requests race:
 *
 *     pending ──approve──▶ approved ──redeem──▶ redeemed
 *        └─────deny─────▶ denied
 *
 * Approve and deny also require `expiresAt > at`; an expired code stays where it was and the grant
 * handler answers `expired_token`. Codes are found by the hash of the device code (token endpoint)
 * or of the normalised user code (verification page); neither is stored in clear.
 */
export interface DeviceCodeStore {
  /**
   * Stores a new device authorization. Returns `false` and writes nothing when a stored code
   * already has the same `userCodeHash` (the caller draws another user code); `true` otherwise.
   */
  createDeviceCode(code: DeviceCode): Promise<boolean>;
  /** The code by device-code hash, in whatever state (the handler must see reuse and denial). */
  findDeviceCode(deviceCodeHash: string): Promise<DeviceCode | null>;
  /** The code by user-code hash, in whatever state. */
  findDeviceCodeByUserCode(userCodeHash: string): Promise<DeviceCode | null>;
  /**
   * pending → approved, recording the grant and the user, if and only if the code is still pending
   * and unexpired at `at` (`UPDATE … WHERE status = 'pending' AND expires_at > $at RETURNING`).
   * `true` for the single caller that won.
   */
  approveDeviceCode(
    deviceCodeHash: string,
    approval: { grantId: string; sub: string; at: number },
  ): Promise<boolean>;
  /** pending → denied under the same conditions as `approveDeviceCode`. */
  denyDeviceCode(deviceCodeHash: string, denial: { sub: string | null; at: number }): Promise<boolean>;
  /**
   * Sets `lastPolledAt = at` and returns the previous poll time and the interval as they were
   * before, in one atomic step (two concurrent polls never both see the same previous time).
   * `null` for an unknown code.
   */
  recordDeviceCodePoll(deviceCodeHash: string, at: number): Promise<DeviceCodePoll | null>;
  /** Adds `seconds` to the polling interval (RFC 8628 §3.5 `slow_down`), atomically. */
  increaseDeviceCodeInterval(deviceCodeHash: string, seconds: number): Promise<void>;
  /**
   * approved → redeemed if and only if the code is approved
   * (`UPDATE … SET status = 'redeemed' WHERE status = 'approved' RETURNING`): of any number of
   * racing polls exactly one gets `true` and may issue tokens.
   */
  redeemDeviceCode(deviceCodeHash: string, at: number): Promise<boolean>;
  /** Housekeeping: deletes codes that expired at or before `before`. Grants are kept. */
  deleteExpiredDeviceCodes(before: number): Promise<void>;
}
