import { describe, expect, it } from 'vitest';
import { redactUrl, serializeError } from '../src/logging.js';

describe('redactUrl', () => {
  it.each([
    ['/orders', '/orders'],
    ['/logout?id_token_hint=eyJ.a.b', '/logout?id_token_hint=[Redacted]'],
    [
      '/x?token=t&refresh_token=r&state=s&nonce=n',
      '/x?token=[Redacted]&refresh_token=[Redacted]&state=[Redacted]&nonce=[Redacted]',
    ],
    [
      '/login?returnUrl=%2Fapp&login_hint=alice%40example.com',
      '/login?returnUrl=%2Fapp&login_hint=[Redacted]',
    ],
    ['/x?unknown_new_secret=v', '/x?unknown_new_secret=[Redacted]'],
    ['/x?flag&a=', '/x?flag&a=[Redacted]'],
    ['/x?%E0%A4%A=bad-encoding', '/x?%E0%A4%A=[Redacted]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});

describe('serializeError', () => {
  it('keeps name, message, code, stack and cause; drops bound parameters and other members', () => {
    const cause = Object.assign(new Error('duplicate key'), { code: '23505', detail: 'Key (email)=(a@b.c)' });
    const error = Object.assign(
      new Error('Failed query: insert into users (email) values ($1)\nparams: alice@example.com', { cause }),
      { params: ['alice@example.com'], query: 'insert …' },
    );

    const serialized = serializeError(error);

    expect(JSON.stringify(serialized)).not.toContain('alice@example.com');
    expect(JSON.stringify(serialized)).not.toContain('a@b.c');
    expect(serialized.message).toBe(
      'Failed query: insert into users (email) values ($1)\nparams: [Redacted]',
    );
    expect(serialized.cause).toMatchObject({ type: 'Error', message: 'duplicate key', code: '23505' });
  });
});
