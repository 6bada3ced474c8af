import { describe, expect, it } from 'vitest';
import { isLocalReturnUrl } from '../src/oidc/return-url.js';

describe('isLocalReturnUrl', () => {
  it.each(['/', '/orders', '/orders/12?tab=items#top', '/search?q=a%20b', '/a/b/../c', '/path//with/double'])(
    'accepts the local path %s',
    (value) => {
      expect(isLocalReturnUrl(value)).toBe(true);
    },
  );

  it.each([
    ['scheme-relative', '//evil.example'],
    ['scheme-relative with a path', '//evil.example/orders'],
    ['absolute https', 'https://evil.example'],
    ['scheme without slashes', 'https:evil.example'],
    ['javascript', 'javascript:alert(1)'],
    ['relative', 'orders'],
    ['empty', ''],
    ['backslash', '/\\evil.example'],
    ['double backslash', '\\\\evil.example'],
    ['backslash later', '/orders\\..\\x'],
    ['userinfo', '/@evil.example'],
    ['at sign in the query', '/orders?next=a@b'],
    ['encoded slashes', '/%2F%2Fevil.example'],
    ['encoded backslash', '/%5Cevil.example'],
    ['double-encoded slashes', '/%252F%252Fevil.example'],
    ['encoded at sign', '/%40evil.example'],
    ['tab', '/\t/evil.example'],
    ['newline', '/\n/evil.example'],
    ['encoded tab', '/%09/evil.example'],
    ['space', '/ /evil.example'],
    ['malformed escape', '/%E0%A4%A'],
    ['too long', `/${'a'.repeat(3000)}`],
  ])('refuses %s: %j', (_name, value) => {
    expect(isLocalReturnUrl(value)).toBe(false);
  });
});
