/**
 * Ceiling: ES256 signatures per second in the harness process, on one core, before any server
 * runs. `jose` is what the servers sign with; raw `node:crypto` shows what is left under it.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { SignJWT } from 'jose';

export interface SigningCeiling {
  library: 'jose' | 'node:crypto';
  signaturesPerSecond: number;
  signatures: number;
  seconds: number;
}

export async function measureSigningCeilings(secondsEach: number): Promise<SigningCeiling[]> {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const payload = {
    iss: 'http://127.0.0.1:4000',
    sub: 'bench-client',
    aud: 'orders-api',
    client_id: 'bench-client',
    scope: 'orders.read orders.write',
  };

  const jose = await measure(secondsEach, async () => {
    const now = Math.floor(Date.now() / 1000);
    await new SignJWT(payload)
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: 'bench' })
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .setJti(String(now))
      .sign(privateKey);
  });

  const data = Buffer.from(
    `${Buffer.from('{"alg":"ES256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`,
  );
  const raw = await measure(secondsEach, async () => {
    sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  });

  return [
    { library: 'jose', ...jose },
    { library: 'node:crypto', ...raw },
  ];
}

async function measure(
  seconds: number,
  operation: () => Promise<void>,
): Promise<{ signaturesPerSecond: number; signatures: number; seconds: number }> {
  const start = process.hrtime.bigint();
  const budget = BigInt(Math.round(seconds * 1e9));
  let count = 0;
  let elapsed = 0n;
  while (elapsed < budget) {
    // Batches keep the clock reads out of the measurement.
    for (let i = 0; i < 50; i++) await operation();
    count += 50;
    elapsed = process.hrtime.bigint() - start;
  }
  const secs = Number(elapsed) / 1e9;
  return { signaturesPerSecond: count / secs, signatures: count, seconds: secs };
}
