import { EncryptJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { deriveKey, sha256Base64url } from '../src/oidc/keys.js';
import { protectState, type SignInState, StateUnprotectError, unprotectState } from '../src/oidc/state.js';
import { sealTokens, unsealTokens } from '../src/oidc/token-sealing.js';

const SECRET = 'state-test-session-secret-0123456789abcdef';
const state: SignInState = {
  returnUrl: '/orders?tab=1',
  codeVerifier: 'v'.repeat(43),
  nonce: 'nonce-1',
  correlationId: 'cid',
  correlationHash: sha256Base64url('cookie-value'),
  redirectUri: 'https://orders.example/signin-oidc',
};

describe('sign-in state protection', () => {
  it('round-trips every member under the same SESSION_SECRET (another instance included)', async () => {
    const protectedState = await protectState(state, deriveKey(SECRET, 'sign-in state'));

    expect(await unprotectState(protectedState, deriveKey(SECRET, 'sign-in state'))).toEqual(state);
  });

  it('hides the code verifier and nonce from whoever sees the URL', async () => {
    const protectedState = await protectState(state, deriveKey(SECRET, 'sign-in state'));

    expect(protectedState).not.toContain(state.codeVerifier);
    expect(Buffer.from(protectedState.split('.').join(''), 'base64url').toString('latin1')).not.toContain(
      'nonce-1',
    );
  });

  it.each([
    [
      'another SESSION_SECRET',
      async () => protectState(state, deriveKey(`${SECRET}-other`, 'sign-in state')),
    ],
    [
      'the session-token key (another purpose)',
      async () => protectState(state, deriveKey(SECRET, 'session tokens')),
    ],
    [
      'a tampered ciphertext',
      async () => {
        const parts = (await protectState(state, deriveKey(SECRET, 'sign-in state'))).split('.');
        // Flip one bit of the decoded ciphertext: editing base64url characters can leave the bytes
        // unchanged (padding bits), which made an earlier version of this case pass by chance.
        const ciphertext = Buffer.from(parts[3]!, 'base64url');
        ciphertext[0] = (ciphertext[0] ?? 0) ^ 0x01;
        parts[3] = ciphertext.toString('base64url');
        return parts.join('.');
      },
    ],
    [
      'an expired state',
      async () =>
        new EncryptJWT({ ru: '/', cv: 'v', n: 'n', cid: 'c', ch: 'h', rd: 'r' })
          .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
          .setIssuedAt(Math.floor(Date.now() / 1000) - 3600)
          .setExpirationTime(Math.floor(Date.now() / 1000) - 1800)
          .encrypt(deriveKey(SECRET, 'sign-in state')),
    ],
    ['garbage', async () => 'not-a-state'],
  ])('refuses %s with StateUnprotectError', async (_name, make) => {
    await expect(unprotectState(await make(), deriveKey(SECRET, 'sign-in state'))).rejects.toBeInstanceOf(
      StateUnprotectError,
    );
  });
});

describe('session token sealing', () => {
  it('round-trips the tokens and hides them', async () => {
    const tokens = {
      idToken: 'id.token.value',
      accessToken: 'access-token-value',
      refreshToken: 'refresh-token-value',
    };
    const sealed = await sealTokens(tokens, deriveKey(SECRET, 'session tokens'));

    expect(sealed).not.toContain('refresh-token-value');
    expect(await unsealTokens(sealed, deriveKey(SECRET, 'session tokens'))).toEqual(tokens);
  });

  it('cannot be opened under another SESSION_SECRET', async () => {
    const sealed = await sealTokens({ accessToken: 'a' }, deriveKey(SECRET, 'session tokens'));

    await expect(unsealTokens(sealed, deriveKey(`${SECRET}-rotated`, 'session tokens'))).rejects.toThrow();
  });
});
