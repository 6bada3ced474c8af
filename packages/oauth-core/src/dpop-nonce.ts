import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from './runtime.js';

/** RFC 9449 §8: server-supplied nonces that proofs must carry. */
export interface DpopNonces {
  /** The nonce to hand out now (`DPoP-Nonce` header). */
  current(): string;
  /** Whether a proof's `nonce` is one this server handed out recently. */
  isValid(nonce: string): boolean;
}

/** Seconds a nonce is handed out; each stays valid for one more window after that. */
export const DEFAULT_DPOP_NONCE_WINDOW_SECONDS = 300;

/**
 * Stateless nonces: the HMAC of the current time window under a server key. Every instance with the
 * same key hands out and accepts the same values, so nothing is stored and a nonce obtained from
 * one instance works at all of them. A nonce stays valid for its window and the next one, so a
 * client is never refused a nonce it has just received.
 */
export function createDpopNonces(
  key: Uint8Array,
  clock: Clock,
  windowSeconds = DEFAULT_DPOP_NONCE_WINDOW_SECONDS,
): DpopNonces {
  if (key.length < 32) throw new RangeError('the DPoP nonce key must have at least 32 bytes');
  const nonceFor = (window: number) =>
    createHmac('sha256', key).update(`dpop-nonce:${window}`).digest('base64url');
  const windowNow = () => Math.floor(clock.nowSeconds() / windowSeconds);
  const same = (a: string, b: string) =>
    a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
  return {
    current: () => nonceFor(windowNow()),
    isValid(nonce) {
      const window = windowNow();
      return same(nonce, nonceFor(window)) || same(nonce, nonceFor(window - 1));
    },
  };
}
