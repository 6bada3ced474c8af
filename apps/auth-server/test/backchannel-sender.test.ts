import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { createBackchannelLogoutSender } from '../src/logout/backchannel-sender.js';
import { backchannelLogoutDeliveries } from '../src/metrics.js';

/** The delivery rules of the back-channel logout sender, against a scripted fetch. */

const silentLog = { info() {}, warn() {}, error() {} } as unknown as FastifyBaseLogger;

const delivery = {
  clientId: 'rp',
  uri: 'https://rp.example.test/bcl',
  logoutToken: 'header.payload.signature',
};

function scriptedFetch(answers: Array<number | 'hang' | 'network'>) {
  const calls: Array<{ url: string; body: string }> = [];
  const fetch = (async (url: string, init: RequestInit) => {
    calls.push({ url, body: String(init.body) });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)];
    if (answer === 'network') throw new TypeError('fetch failed');
    if (answer === 'hang') {
      // Never answers: only the per-attempt timeout (or closing) ends it.
      return new Promise((_resolve, reject) =>
        init.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true }),
      );
    }
    return new Response(null, { status: answer });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, calls };
}

function sender(fetch: typeof globalThis.fetch, over: { attempts?: number; timeoutMs?: number } = {}) {
  return createBackchannelLogoutSender({
    attempts: over.attempts ?? 3,
    timeoutMs: over.timeoutMs ?? 1_000,
    retryDelayMs: () => 1,
    fetch,
    log: silentLog,
  });
}

describe('back-channel logout sender', () => {
  it('POSTs logout_token form-encoded, once when the relying party answers 200', async () => {
    const { fetch, calls } = scriptedFetch([200]);
    const backchannel = sender(fetch);
    backchannel.send([delivery]);
    await backchannel.idle();
    expect(calls).toEqual([{ url: delivery.uri, body: `logout_token=${delivery.logoutToken}` }]);
  });

  it('retries network errors, 5xx, 408 and 429, up to the attempt limit', async () => {
    for (const failure of ['network', 500, 503, 408, 429] as const) {
      const { fetch, calls } = scriptedFetch([failure]);
      const backchannel = sender(fetch);
      backchannel.send([delivery]);
      await backchannel.idle();
      expect(calls).toHaveLength(3);
    }
  });

  it('does not retry a refusal (400) or a redirect', async () => {
    for (const final of [400, 302]) {
      const { fetch, calls } = scriptedFetch([final, 200]);
      const backchannel = sender(fetch);
      backchannel.send([delivery]);
      await backchannel.idle();
      expect(calls).toHaveLength(1);
    }
  });

  it('abandons an attempt at its timeout and tries again', async () => {
    const { fetch, calls } = scriptedFetch(['hang', 204]);
    const backchannel = sender(fetch, { timeoutMs: 50 });
    backchannel.send([delivery]);
    await backchannel.idle();
    expect(calls).toHaveLength(2);
  });

  it('gives up pending deliveries when closed after the grace period', async () => {
    const { fetch, calls } = scriptedFetch(['hang']);
    const backchannel = sender(fetch, { timeoutMs: 60_000 });
    backchannel.send([delivery, { ...delivery, clientId: 'rp-2' }]);
    await backchannel.close(10);
    expect(calls).toHaveLength(2);
    // Nothing is left running.
    await backchannel.idle();
  });
});

describe('back-channel logout sender: the deliveries metric', () => {
  it('counts each finished delivery by outcome: delivered, refused (400), abandoned (every attempt failed)', async () => {
    const count = async (outcome: string) =>
      (await backchannelLogoutDeliveries.get()).values.find((value) => value.labels.outcome === outcome)
        ?.value ?? 0;
    const before = {
      delivered: await count('delivered'),
      refused: await count('refused'),
      abandoned: await count('abandoned'),
    };
    for (const answers of [[200], [400], [503]] as const) {
      const backchannel = sender(scriptedFetch([...answers]).fetch);
      backchannel.send([delivery]);
      await backchannel.idle();
    }
    expect((await count('delivered')) - before.delivered).toBe(1);
    expect((await count('refused')) - before.refused).toBe(1);
    expect((await count('abandoned')) - before.abandoned).toBe(1);
  });
});
