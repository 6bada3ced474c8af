import { describe, expect, it } from 'vitest';
import { postLogoutContinueUrl, validateLogoutRequest } from '../src/logout.js';
import { createMemoryStores, createTestClock, createTestKeys } from '../src/testing.js';
import { ISSUER, makeClient } from './fixtures.js';

async function setup() {
  const clock = createTestClock();
  const keys = await createTestKeys(clock);
  const stores = createMemoryStores({
    clients: [
      makeClient({ clientId: 'web', postLogoutRedirectUris: ['https://web.example.test/bye?x=1'] }),
      makeClient({ clientId: 'other' }),
    ],
  });
  const idToken = (claims: Record<string, unknown>) =>
    keys.signer.sign(
      { iss: ISSUER, sub: 'u-1', iat: clock.nowSeconds() - 7200, exp: clock.nowSeconds() - 3600, ...claims },
      { alg: 'ES256', typ: 'JWT' },
    );
  const validate = (params: Parameters<typeof validateLogoutRequest>[0]) =>
    validateLogoutRequest(params, { verifier: keys.verifier, clients: stores.clients });
  return { idToken, validate };
}

describe('validateLogoutRequest (OIDC RP-Initiated Logout 1.0 §2, §3)', () => {
  it('accepts an expired ID token hint of this server; its single audience names the client, its sid is returned', async () => {
    const { idToken, validate } = await setup();
    const decision = await validate({
      id_token_hint: await idToken({ aud: 'web', sid: 'sid-1' }),
      post_logout_redirect_uri: 'https://web.example.test/bye?x=1',
      state: 's 1',
    });
    expect(decision).toMatchObject({
      valid: true,
      hintSid: 'sid-1',
      redirectUri: 'https://web.example.test/bye?x=1',
    });
    expect(decision.valid && decision.client?.clientId).toBe('web');
    expect(decision.valid && decision.continueUrl).toBe('https://web.example.test/bye?x=1&state=s+1');
  });

  it('refuses a hint this server did not sign, and a client_id that is not the hint audience', async () => {
    const { idToken, validate } = await setup();
    expect(await validate({ id_token_hint: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' })).toEqual({
      valid: false,
      problem: 'id_token_hint',
    });
    const hint = await idToken({ aud: 'web', sid: 'sid-1' });
    expect(await validate({ id_token_hint: hint, client_id: 'other' })).toEqual({
      valid: false,
      problem: 'id_token_hint',
    });
    expect(await validate({ id_token_hint: hint, client_id: 'web' })).toMatchObject({ valid: true });
  });

  it('refuses the whole request when the post-logout redirect URI is not exactly a registered one (§3)', async () => {
    const { idToken, validate } = await setup();
    const hint = await idToken({ aud: 'web', sid: 'sid-1' });
    for (const uri of [
      'https://web.example.test/bye',
      'https://web.example.test/bye?x=1&y=2',
      'https://evil.example/',
    ]) {
      for (const named of [{ client_id: 'web' }, { id_token_hint: hint }]) {
        expect(await validate({ ...named, post_logout_redirect_uri: uri })).toEqual({
          valid: false,
          problem: 'post_logout_redirect_uri',
        });
      }
    }
    expect(
      await validate({ client_id: 'other', post_logout_redirect_uri: 'https://web.example.test/bye?x=1' }),
    ).toEqual({ valid: false, problem: 'post_logout_redirect_uri' });
  });

  it('goes on without redirection when no client is known to have registered the URI', async () => {
    const { validate } = await setup();
    // Without client_id or hint no client is known, so no URI can be registered.
    expect(await validate({ post_logout_redirect_uri: 'https://web.example.test/bye?x=1' })).toMatchObject({
      valid: true,
      client: null,
      redirectUri: null,
    });
  });

  it('appends state to the registered URI, keeping its query', () => {
    expect(postLogoutContinueUrl('https://rp.example/out?a=1', 'xyz')).toBe(
      'https://rp.example/out?a=1&state=xyz',
    );
    expect(postLogoutContinueUrl('https://rp.example/out', undefined)).toBe('https://rp.example/out');
  });
});
