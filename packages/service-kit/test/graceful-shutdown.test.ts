import { describe, expect, it } from 'vitest';
import { gracefulShutdown, type ShutdownLogger } from '../src/index.js';

function recorder() {
  const events: string[] = [];
  const line = (level: string) => (_details: object, message: string) => events.push(`${level}: ${message}`);
  const log: ShutdownLogger = {
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    fatal: line('fatal'),
  };
  return { events, log };
}

describe('gracefulShutdown', () => {
  it('drains, then closes, then exits 0, in that order; a second signal is ignored', async () => {
    const { events, log } = recorder();
    const handle = gracefulShutdown({
      log,
      pauseMs: 1,
      timeoutMs: 60_000,
      startDraining: () => events.push('draining'),
      close: async () => void events.push('close'),
      exit: (code) => void events.push(`exit ${code}`),
    });
    const first = handle('SIGTERM');
    await handle('SIGINT');
    await first;
    expect(events).toEqual([
      'info: shutdown: readiness is now 503, still serving',
      'draining',
      'warn: shutdown already in progress',
      'info: shutdown: closing the server, waiting for in-flight requests',
      'close',
      'info: shutdown complete',
      'exit 0',
    ]);
  });

  it('exits 1 when closing fails', async () => {
    const { events, log } = recorder();
    await gracefulShutdown({
      log,
      pauseMs: 0,
      timeoutMs: 60_000,
      startDraining: () => {},
      close: async () => {
        throw new Error('boom');
      },
      exit: (code) => void events.push(`exit ${code}`),
    })('SIGTERM');
    expect(events.slice(-2)).toEqual(['error: shutdown failed; exiting 1', 'exit 1']);
  });
});
