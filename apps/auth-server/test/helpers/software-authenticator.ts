import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';

/**
 * A software authenticator over plain HTTP: the registration ceremony (WebAuthn §6.5, §8.7: a fresh
 * ES256 key, "none" attestation, user present and verified) and the authentication one (§6.3.3: an
 * assertion signed with a credential it holds). Enough for the server's §7.1 and §7.2 checks; the
 * Chromium passkey test runs a browser's own virtual authenticator instead.
 */

/** CBOR (RFC 8949 §3) head of a major type with its argument; lengths here stay below 2^16. */
function head(major: number, value: number): Buffer {
  if (value < 24) return Buffer.from([(major << 5) | value]);
  if (value < 256) return Buffer.from([(major << 5) | 24, value]);
  return Buffer.from([(major << 5) | 25, value >> 8, value & 0xff]);
}
const cborBytes = (bytes: Buffer) => Buffer.concat([head(2, bytes.length), bytes]);
const cborText = (text: string) => Buffer.concat([head(3, Buffer.byteLength(text)), Buffer.from(text)]);
/** A small integer key or value of a COSE map (RFC 9052 §7): negative numbers are major type 1. */
const cborInt = (value: number) => (value >= 0 ? head(0, value) : head(1, -1 - value));

/** The EC2 P-256 public key as a COSE_Key (RFC 9053 §7.1.1): kty 2, alg -7 (ES256), crv 1. */
function coseKeyOf(jwk: { x?: string; y?: string }): Buffer {
  const coordinate = (value: string | undefined) => cborBytes(Buffer.from(value!, 'base64url'));
  return Buffer.concat([
    head(5, 5),
    cborInt(1),
    cborInt(2),
    cborInt(3),
    cborInt(-7),
    cborInt(-1),
    cborInt(1),
    cborInt(-2),
    coordinate(jwk.x),
    cborInt(-3),
    coordinate(jwk.y),
  ]);
}

/** The registration response a browser would post for these creation options (the JSON form). */
export function createPasskeyResponse(options: { challenge: string; rp: { id: string } }, origin: string) {
  const credentialId = randomBytes(16);
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const counter = Buffer.alloc(4);
  const idLength = Buffer.from([credentialId.length >> 8, credentialId.length & 0xff]);
  // §6.1: RP ID hash, flags UP | UV | AT, counter, then the attested credential data (§6.5.1).
  const authData = Buffer.concat([
    createHash('sha256').update(options.rp.id).digest(),
    Buffer.from([0x45]),
    counter,
    Buffer.alloc(16),
    idLength,
    credentialId,
    coseKeyOf(publicKey.export({ format: 'jwk' })),
  ]);
  const attestationObject = Buffer.concat([
    head(5, 3),
    cborText('fmt'),
    cborText('none'),
    cborText('attStmt'),
    head(5, 0),
    cborText('authData'),
    cborBytes(authData),
  ]);
  const clientData = { type: 'webauthn.create', challenge: options.challenge, origin, crossOrigin: false };
  const id = credentialId.toString('base64url');
  return {
    id,
    rawId: id,
    type: 'public-key',
    authenticatorAttachment: 'platform',
    clientExtensionResults: {},
    response: {
      clientDataJSON: Buffer.from(JSON.stringify(clientData)).toString('base64url'),
      attestationObject: attestationObject.toString('base64url'),
      transports: ['internal'],
    },
  };
}

/** A credential this authenticator holds: its public key as the server stores it (COSE, base64url). */
export interface SoftwareCredential {
  id: string;
  publicKey: string;
  privateKey: KeyObject;
}

export function createSoftwareCredential(): SoftwareCredential {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    id: randomBytes(16).toString('base64url'),
    publicKey: coseKeyOf(publicKey.export({ format: 'jwk' })).toString('base64url'),
    privateKey,
  };
}

/**
 * The assertion a browser would post for these request options (§6.3.3, the JSON form): flags
 * UP | UV, the signature counter given, ES256 over authenticatorData ‖ SHA-256(clientDataJSON).
 */
export function createAssertion(
  credential: SoftwareCredential,
  options: { challenge: string; rpId: string },
  origin: string,
  counter: number,
) {
  const counterBytes = Buffer.alloc(4);
  counterBytes.writeUInt32BE(counter, 0);
  const authData = Buffer.concat([
    createHash('sha256').update(options.rpId).digest(),
    Buffer.from([0x05]),
    counterBytes,
  ]);
  const clientDataJSON = Buffer.from(
    JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin, crossOrigin: false }),
  );
  const signature = sign(
    'sha256',
    Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]),
    credential.privateKey,
  );
  return {
    id: credential.id,
    rawId: credential.id,
    type: 'public-key',
    authenticatorAttachment: 'platform',
    clientExtensionResults: {},
    response: {
      clientDataJSON: clientDataJSON.toString('base64url'),
      authenticatorData: authData.toString('base64url'),
      signature: signature.toString('base64url'),
    },
  };
}
