import { describe, expect, it } from 'vitest';
import { prettyTransport } from '../src/index.js';

describe('prettyTransport', () => {
  it('names the service on every line and leaves out pid and hostname', () => {
    expect(prettyTransport('orders')).toEqual({
      target: 'pino-pretty',
      options: { ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss', messageFormat: 'orders | {msg}' },
    });
  });
});
