import { describe, expect, it } from 'vitest';
import { authenticationChallenge, quotedString } from '../src/challenge.js';
import { insufficientScope, invalidToken } from '../src/errors.js';

describe('quotedString (RFC 9110 §5.6.4)', () => {
  it('escapes quotes and backslashes, keeps other text', () => {
    expect(quotedString('plain text')).toBe('"plain text"');
    expect(quotedString('say "hi" \\ bye')).toBe('"say \\"hi\\" \\\\ bye"');
  });

  it('drops characters a header value cannot carry (CR, LF, other controls), keeps tab', () => {
    expect(quotedString('a\r\nSet-Cookie: x\u0000\tb')).toBe('"aSet-Cookie: x\tb"');
  });
});

describe('authenticationChallenge', () => {
  it('writes the scheme and the defined parameters in order', () => {
    expect(
      authenticationChallenge('Bearer', [
        ['realm', 'api'],
        ['error', 'invalid_token'],
        ['error_description', undefined],
        ['scope', 'orders.read'],
      ]),
    ).toBe('Bearer realm="api", error="invalid_token", scope="orders.read"');
    expect(authenticationChallenge('DPoP')).toBe('DPoP');
  });

  it('is what the RFC 6750 errors carry', () => {
    expect(invalidToken().headers['WWW-Authenticate']).toBe(
      'Bearer error="invalid_token", error_description="the access token is invalid"',
    );
    expect(insufficientScope('orders.read').headers['WWW-Authenticate']).toBe(
      'Bearer error="insufficient_scope", error_description="the access token does not carry the required scope", scope="orders.read"',
    );
  });
});
