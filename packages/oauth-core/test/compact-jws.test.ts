import { generateKeyPairSync, type KeyObject, verify } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  COMPACT_JWS_ALGS,
  encodeJwsHeader,
  type JwtType,
  jwsSigningKey,
  type SigningAlg,
  signCompactJws,
} from '../src/index.js';

const KEY_PAIRS: Record<SigningAlg, { privateKey: KeyObject; publicKey: KeyObject }> = {
  RS256: generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: generateKeyPairSync('ec', { namedCurve: 'P-256' }),
};

const JWT_TYPES: readonly JwtType[] = ['at+jwt', 'JWT', 'logout+jwt', 'token-introspection+jwt'];

/** ID-token-like claims with a non-ASCII name: the payload segment must be UTF-8 (RFC 7515 §7.1). */
const CLAIMS = {
  iss: 'https://issuer.example.test',
  sub: 'u-alice',
  aud: 'web',
  iat: 1_700_000_000,
  exp: 1_700_000_300,
  nonce: 'n-0S6_WzA2Mj',
  name: 'Zoë Ŝtraße',
  amr: ['pwd'],
};

function signed(alg: SigningAlg, typ: JwtType = 'JWT'): string {
  const key = jwsSigningKey(alg, `kid-${alg}`, KEY_PAIRS[alg].privateKey);
  return signCompactJws(key, encodeJwsHeader(key, typ), CLAIMS);
}

function signatureBytes(jws: string): Buffer {
  return Buffer.from(jws.split('.')[2] ?? '', 'base64url');
}

describe.each(COMPACT_JWS_ALGS)('signCompactJws %s', (alg) => {
  it.each(JWT_TYPES)(
    'typ %s: jose jwtVerify accepts it with header {alg, kid, typ} and the claims',
    async (typ) => {
      const jws = signed(alg, typ);
      const { payload, protectedHeader } = await jwtVerify(jws, KEY_PAIRS[alg].publicKey, {
        algorithms: [alg],
        typ,
        currentDate: new Date(CLAIMS.iat * 1000),
      });
      expect(protectedHeader).toEqual({ alg, kid: `kid-${alg}`, typ });
      expect(payload).toEqual(CLAIMS);
    },
  );

  it('jose compactVerify returns the payload bytes: UTF-8 of the claims serialized as given', async () => {
    const { payload } = await compactVerify(signed(alg), KEY_PAIRS[alg].publicKey, { algorithms: [alg] });
    expect(Buffer.from(payload).equals(Buffer.from(JSON.stringify(CLAIMS), 'utf8'))).toBe(true);
  });

  it("signs the same header and payload segments as jose's SignJWT", async () => {
    const ours = signed(alg, 'at+jwt');
    const joses = await new SignJWT(CLAIMS)
      .setProtectedHeader({ alg, kid: `kid-${alg}`, typ: 'at+jwt' })
      .sign(KEY_PAIRS[alg].privateKey);
    const signingInput = (jws: string) => jws.split('.').slice(0, 2).join('.');
    expect(signingInput(ours)).toBe(signingInput(joses));
    // RSASSA-PKCS1-v1_5 is deterministic: the whole token is jose's, byte for byte.
    if (alg === 'RS256') expect(ours).toBe(joses);
  });
});

describe('ES256 signatures', () => {
  it('are R‖S, 64 bytes (IEEE P1363, RFC 7518 §3.4), not an ASN.1 DER sequence', () => {
    const { publicKey } = KEY_PAIRS.ES256;
    for (let i = 0; i < 20; i++) {
      const jws = signed('ES256');
      const signature = signatureBytes(jws);
      expect(signature).toHaveLength(64);
      const signingInput = Buffer.from(jws.slice(0, jws.lastIndexOf('.')));
      expect(verify('sha256', signingInput, { key: publicKey, dsaEncoding: 'ieee-p1363' }, signature)).toBe(
        true,
      );
    }
  });
});

describe('jwsSigningKey', () => {
  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  it.each([
    ['an EC key for RS256', 'RS256', KEY_PAIRS.ES256.privateKey],
    ['an RSA key for ES256', 'ES256', KEY_PAIRS.RS256.privateKey],
    ['a P-384 key for ES256', 'ES256', p384.privateKey],
    ['a 1024-bit RSA key for RS256 (RFC 7518 §3.3: 2048 or larger)', 'RS256', rsa1024.privateKey],
    ['a public key', 'ES256', KEY_PAIRS.ES256.publicKey],
  ] as const)('refuses %s', (_name, alg, key) => {
    expect(() => jwsSigningKey(alg, 'k', key)).toThrow(TypeError);
  });

  it('keeps the kid and alg it was given for the header', () => {
    const jws = signed('ES256', 'logout+jwt');
    expect(decodeProtectedHeader(jws)).toEqual({ alg: 'ES256', kid: 'kid-ES256', typ: 'logout+jwt' });
  });
});
