import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { JWT_CLOCK_SKEW_SECONDS } from '../src/clock-skew.js';
import {
  asResourceChallenge,
  computeAccessTokenHash,
  type DpopProofCheck,
  invalidDpopProof,
  verifyDpopProof,
} from '../src/dpop.js';
import { createDpopNonces } from '../src/dpop-nonce.js';
import { OAuthError } from '../src/errors.js';
import { createMemoryDpopReplayStore } from '../src/storage/memory-dpop-replay.js';
import { createTestClock } from '../src/testing.js';

const NOW = 1_700_000_000;
const TOKEN_URL = 'https://auth.example.test/token';

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
const keys: Record<string, { pair: KeyPair; jwk: JWK }> = {};

beforeAll(async () => {
  for (const alg of ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256', 'ES384']) {
    const pair = await generateKeyPair(alg, { extractable: true });
    keys[alg] = { pair, jwk: await exportJWK(pair.publicKey) };
  }
  const other = await generateKeyPair('ES256', { extractable: true });
  keys.otherES256 = { pair: other, jwk: await exportJWK(other.publicKey) };
});

interface ProofOptions {
  alg?: string;
  typ?: string;
  jwk?: JWK | null;
  claims?: Record<string, unknown>;
  omit?: string[];
}

let jtiCounter = 0;
async function proof(options: ProofOptions = {}): Promise<string> {
  const alg = options.alg ?? 'ES256';
  const key = keys[alg]!;
  const claims: Record<string, unknown> = {
    jti: `jti-${++jtiCounter}`,
    htm: 'POST',
    htu: TOKEN_URL,
    iat: NOW,
    ...options.claims,
  };
  for (const name of options.omit ?? []) delete claims[name];
  const header: Record<string, unknown> = { alg, typ: options.typ ?? 'dpop+jwt' };
  if (options.jwk !== null) header.jwk = options.jwk ?? key.jwk;
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key.pair.privateKey);
}

const check = (over: Partial<DpopProofCheck> = {}): DpopProofCheck => ({
  method: 'POST',
  url: TOKEN_URL,
  now: NOW,
  ...over,
});

async function rejection(promise: Promise<unknown>): Promise<OAuthError> {
  const error = await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

describe('verifyDpopProof', () => {
  it.each(['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'])(
    'accepts a valid %s proof and returns the RFC 7638 thumbprint',
    async (alg) => {
      const result = await verifyDpopProof(await proof({ alg }), check(), createMemoryDpopReplayStore());
      expect(result.jkt).toBe(await calculateJwkThumbprint(keys[alg]!.jwk, 'sha256'));
      expect(result.iat).toBe(NOW);
    },
  );

  it('refuses a replayed proof (same jti), but not a fresh proof of the same key', async () => {
    const replay = createMemoryDpopReplayStore();
    const first = await proof();
    await verifyDpopProof(first, check(), replay);
    expect((await rejection(verifyDpopProof(first, check({ now: NOW + 1 }), replay))).code).toBe(
      'invalid_dpop_proof',
    );
    await expect(verifyDpopProof(await proof(), check(), replay)).resolves.toBeDefined();
  });

  it('does not burn the jti of a proof it rejects', async () => {
    const replay = createMemoryDpopReplayStore();
    const sent = await proof({ claims: { jti: 'retry-me' } });
    await rejection(verifyDpopProof(sent, check({ method: 'GET' }), replay));
    await expect(verifyDpopProof(sent, check(), replay)).resolves.toBeDefined();
  });

  it('ignores the query and fragment of htu, and normalises case and default port', async () => {
    const replay = createMemoryDpopReplayStore();
    for (const htu of [`${TOKEN_URL}?a=1`, `${TOKEN_URL}#frag`, 'HTTPS://AUTH.example.test:443/token']) {
      await expect(verifyDpopProof(await proof({ claims: { htu } }), check(), replay)).resolves.toBeDefined();
    }
  });

  it('accepts an iat up to JWT_CLOCK_SKEW_SECONDS (10 s) ahead, FAPI 2.0 SP §5.3.2.1', async () => {
    const replay = createMemoryDpopReplayStore();
    for (const ahead of [8, JWT_CLOCK_SKEW_SECONDS]) {
      const result = await verifyDpopProof(await proof({ claims: { iat: NOW + ahead } }), check(), replay);
      expect(result.iat).toBe(NOW + ahead);
    }
  });

  const rejected: Array<[string, ProofOptions | (() => Promise<ProofOptions>), Partial<DpopProofCheck>]> = [
    ['wrong htm', { claims: { htm: 'GET' } }, {}],
    ['wrong htu (path)', { claims: { htu: 'https://auth.example.test/userinfo' } }, {}],
    ['wrong htu (host)', { claims: { htu: 'https://evil.example.test/token' } }, {}],
    ['htu not a URL', { claims: { htu: 'token' } }, {}],
    ['stale iat', { claims: { iat: NOW - 61 } }, {}],
    ['iat 11 s in the future', { claims: { iat: NOW + JWT_CLOCK_SKEW_SECONDS + 1 } }, {}],
    ['iat 61 s in the future', { claims: { iat: NOW + 61 } }, {}],
    ['missing jti', { omit: ['jti'] }, {}],
    ['missing htm', { omit: ['htm'] }, {}],
    ['missing iat', { omit: ['iat'] }, {}],
    ['bad typ', { typ: 'JWT' }, {}],
    ['unsupported alg (ES384)', { alg: 'ES384' }, {}],
    ['alg not allowed by the caller', { alg: 'RS256' }, { allowedAlgs: ['ES256'] }],
    ['no jwk header', { jwk: null }, {}],
    ['missing ath at a resource', {}, { accessToken: 'at-1' }],
    ['ath of another token', { claims: { ath: computeAccessTokenHash('at-2') } }, { accessToken: 'at-1' }],
  ];
  it.each(rejected)('rejects %s with invalid_dpop_proof', async (_name, options, over) => {
    const resolved = typeof options === 'function' ? await options() : options;
    const error = await rejection(
      verifyDpopProof(await proof(resolved), check(over), createMemoryDpopReplayStore()),
    );
    expect(error.code).toBe('invalid_dpop_proof');
    expect(error.status).toBe(400);
  });

  it('rejects a jwk that carries the private key', async () => {
    const privateJwk = await exportJWK(keys.ES256!.pair.privateKey);
    expect(privateJwk.d).toBeDefined();
    const error = await rejection(
      verifyDpopProof(await proof({ jwk: privateJwk }), check(), createMemoryDpopReplayStore()),
    );
    expect(error.code).toBe('invalid_dpop_proof');
  });

  it('rejects a proof signed by a key other than the embedded jwk', async () => {
    const error = await rejection(
      verifyDpopProof(
        await proof({ alg: 'ES256', jwk: keys.otherES256!.jwk }),
        check(),
        createMemoryDpopReplayStore(),
      ),
    );
    expect(error.code).toBe('invalid_dpop_proof');
  });

  it('rejects garbage', async () => {
    for (const value of ['', 'not-a-jwt', 'a.b.c', 'x'.repeat(9000)]) {
      expect((await rejection(verifyDpopProof(value, check(), createMemoryDpopReplayStore()))).code).toBe(
        'invalid_dpop_proof',
      );
    }
  });

  it('accepts ath = base64url(SHA-256(access token)) at a resource', async () => {
    const accessToken = 'eyJ.example.token';
    const ath = createHash('sha256').update(accessToken).digest('base64url');
    expect(computeAccessTokenHash(accessToken)).toBe(ath);
    await expect(
      verifyDpopProof(
        await proof({ claims: { ath, htm: 'GET', htu: 'https://auth.example.test/userinfo' } }),
        check({ method: 'GET', url: 'https://auth.example.test/userinfo', accessToken }),
        createMemoryDpopReplayStore(),
      ),
    ).resolves.toBeDefined();
  });

  describe('server nonces (RFC 9449 §8)', () => {
    const clock = createTestClock(NOW);
    const nonces = createDpopNonces(new Uint8Array(32).fill(3), clock, 300);

    it('asks for the nonce with use_dpop_nonce and a DPoP-Nonce header, then accepts it', async () => {
      const replay = createMemoryDpopReplayStore();
      const error = await rejection(verifyDpopProof(await proof(), check({ nonces }), replay));
      expect(error.code).toBe('use_dpop_nonce');
      expect(error.status).toBe(400);
      expect(error.headers['DPoP-Nonce']).toBe(nonces.current());
      const nonce = error.headers['DPoP-Nonce'];
      await expect(
        verifyDpopProof(await proof({ claims: { nonce } }), check({ nonces }), replay),
      ).resolves.toBeDefined();
    });

    it('refuses an unknown nonce, and one two windows old', async () => {
      const replay = createMemoryDpopReplayStore();
      expect(
        (
          await rejection(
            verifyDpopProof(await proof({ claims: { nonce: 'made-up' } }), check({ nonces }), replay),
          )
        ).code,
      ).toBe('use_dpop_nonce');
      const old = nonces.current();
      clock.advance(300);
      expect(nonces.isValid(old)).toBe(true);
      clock.advance(300);
      expect(nonces.isValid(old)).toBe(false);
    });

    it('gives every instance with the same key the same nonce', () => {
      const other = createDpopNonces(new Uint8Array(32).fill(3), clock, 300);
      const unrelated = createDpopNonces(new Uint8Array(32).fill(4), clock, 300);
      expect(other.current()).toBe(nonces.current());
      expect(unrelated.isValid(nonces.current())).toBe(false);
    });
  });
});

describe('asResourceChallenge', () => {
  it('turns a DPoP error into a 401 with a DPoP challenge naming the error and the algorithms', () => {
    const error = asResourceChallenge(invalidDpopProof('x'));
    expect(error.status).toBe(401);
    expect(error.headers['WWW-Authenticate']).toBe(
      'DPoP error="invalid_dpop_proof", error_description="the DPoP proof is invalid", algs="ES256 EdDSA Ed25519 RS256 PS256"',
    );
  });

  it('keeps the DPoP-Nonce header and the scope of insufficient_scope', () => {
    const nonce = asResourceChallenge(
      new OAuthError('use_dpop_nonce', { description: 'd', headers: { 'DPoP-Nonce': 'n-1' } }),
    );
    expect(nonce.headers['DPoP-Nonce']).toBe('n-1');
    expect(nonce.headers['WWW-Authenticate']).toMatch(/^DPoP error="use_dpop_nonce"/);
    const scope = asResourceChallenge(
      new OAuthError('insufficient_scope', {
        description: 'd',
        headers: { 'WWW-Authenticate': 'Bearer error="insufficient_scope", scope="openid"' },
      }),
    );
    expect(scope.status).toBe(403);
    expect(scope.headers['WWW-Authenticate']).toContain('scope="openid"');
  });
});

describe('DpopReplayStore memory twin', () => {
  it('drops expired entries', async () => {
    const replay = createMemoryDpopReplayStore();
    await replay.markUsed('a', NOW + 10);
    await replay.markUsed('b', NOW + 100);
    expect(await replay.deleteExpired(NOW + 10)).toBe(1);
    expect(await replay.markUsed('a', NOW + 200)).toBe(true);
    expect(await replay.markUsed('b', NOW + 200)).toBe(false);
  });
});
