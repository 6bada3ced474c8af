import type { BackChannelLogoutDelivery } from '@oidc-orders/oauth-core';
import type { FastifyBaseLogger } from 'fastify';
import { backchannelLogoutDeliveries } from '../metrics.js';

/**
 * OIDC Back-Channel Logout 1.0 §2.5: POST `logout_token` to each relying party, from the server,
 * never through the browser. Deliveries run in the background (the user's logout page does not wait
 * for them), each attempt bounded by a timeout, retried with backoff when the relying party is
 * unreachable or answers 5xx, 408 or 429. Another answer (2xx: done; 400: the relying party rejected
 * the token; anything else) is final. Deliveries live in this process only: an instance that stops
 * gives up what is still pending after a grace period (README "Logout").
 */
export interface BackchannelLogoutSenderOptions {
  /** Attempts per delivery, first one included (default 3). */
  attempts: number;
  /** Per attempt, milliseconds (default 5000). */
  timeoutMs: number;
  /** Wait after failed attempt `n` (1-based), milliseconds (default 1 s, then 4 s). */
  retryDelayMs: (failedAttempt: number) => number;
  fetch: typeof fetch;
  /** A server's logger, or the `users` command's lines on stderr. */
  log: DeliveryLog;
}

/** What the sender reports: identifiers, statuses and reasons, never the logout token. */
export type DeliveryLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

export interface BackchannelLogoutSender {
  /** Starts the deliveries and returns at once. */
  send(deliveries: readonly BackChannelLogoutDelivery[]): void;
  /** Resolves when every delivery started so far has finished (delivered or given up). */
  idle(): Promise<void>;
  /** Waits up to `graceMs` for pending deliveries, then abandons the rest. */
  close(graceMs: number): Promise<void>;
}

export const DEFAULT_BACKCHANNEL_LOGOUT_OPTIONS = {
  attempts: 3,
  timeoutMs: 5_000,
  retryDelayMs: (failedAttempt: number) => 1_000 * 4 ** (failedAttempt - 1),
} as const;

type Outcome =
  | { kind: 'delivered'; status: number }
  | { kind: 'final'; status: number }
  | { kind: 'retry'; reason: string };

export function createBackchannelLogoutSender(
  options: BackchannelLogoutSenderOptions,
): BackchannelLogoutSender {
  const pending = new Set<Promise<void>>();
  const stop = new AbortController();

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      stop.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });

  async function attempt(delivery: BackChannelLogoutDelivery): Promise<Outcome> {
    try {
      const response = await options.fetch(delivery.uri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ logout_token: delivery.logoutToken }).toString(),
        // A relying party that redirects is answering something else; never follow it with the token.
        redirect: 'manual',
        signal: AbortSignal.any([stop.signal, AbortSignal.timeout(options.timeoutMs)]),
      });
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300)
        return { kind: 'delivered', status: response.status };
      if (response.status >= 500 || response.status === 408 || response.status === 429) {
        return { kind: 'retry', reason: `HTTP ${response.status}` };
      }
      // §2.8: 400 means the relying party refused the token; sending it again changes nothing.
      return { kind: 'final', status: response.status };
    } catch (error) {
      return {
        kind: 'retry',
        reason: (error as Error).name === 'TimeoutError' ? 'timeout' : (error as Error).message,
      };
    }
  }

  async function deliver(delivery: BackChannelLogoutDelivery): Promise<void> {
    const context = { clientId: delivery.clientId, uri: delivery.uri };
    for (let attemptNumber = 1; attemptNumber <= options.attempts; attemptNumber++) {
      if (stop.signal.aborted) break;
      const outcome = await attempt(delivery);
      if (outcome.kind === 'delivered') {
        backchannelLogoutDeliveries.inc({ outcome: 'delivered' });
        options.log.info(
          { ...context, status: outcome.status, attempt: attemptNumber },
          'back-channel logout delivered',
        );
        return;
      }
      if (outcome.kind === 'final') {
        backchannelLogoutDeliveries.inc({ outcome: 'refused' });
        options.log.warn(
          { ...context, status: outcome.status },
          'back-channel logout refused by the relying party',
        );
        return;
      }
      options.log.info(
        { ...context, attempt: attemptNumber, reason: outcome.reason },
        'back-channel logout attempt failed',
      );
      if (attemptNumber < options.attempts) await wait(options.retryDelayMs(attemptNumber));
    }
    backchannelLogoutDeliveries.inc({ outcome: 'abandoned' });
    options.log.warn(context, 'back-channel logout not delivered; giving up');
  }

  return {
    send(deliveries) {
      for (const delivery of deliveries) {
        const running: Promise<void> = deliver(delivery)
          .catch((error) =>
            options.log.error({ err: error, clientId: delivery.clientId }, 'back-channel logout failed'),
          )
          .finally(() => pending.delete(running));
        pending.add(running);
      }
    },
    async idle() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    async close(graceMs) {
      const grace = new Promise<void>((resolve) => setTimeout(resolve, graceMs).unref());
      await Promise.race([this.idle(), grace]);
      stop.abort();
      await this.idle();
    },
  };
}
