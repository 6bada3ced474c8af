import type { Clock, KeyStore, SigningAlg, SigningKeyRecord } from '@oidc-orders/oauth-core';
import { sql } from 'drizzle-orm';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { AppDatabase } from '../db/client.js';
import { createKeyStore } from '../storage/drizzle/stores.js';
import { encryptPrivateKey } from './key-encryption.js';
import { SUPPORTED_SIGNING_ALGS } from './key-ring.js';

/** Any constant works; it only has to be the same in every instance. */
export const SIGNING_KEY_LOCK_KEY = 4_000_002;

/**
 * Makes sure an active key exists for every supported algorithm, generating the missing ones, and
 * returns every stored key.
 *
 * Two instances starting against an empty database must not each create their own keys (they would
 * publish different JWKS). The check and the insert run in one transaction holding a transaction-level
 * advisory lock, so the second instance waits, then sees the first one's keys.
 */
export async function ensureSigningKeys(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array,
  clock: Clock,
): Promise<readonly SigningKeyRecord[]> {
  const existing = await createKeyStore(db).listSigningKeys();
  if (missingAlgorithms(existing, clock).length === 0) return existing;

  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SIGNING_KEY_LOCK_KEY})`);
    const keyStore: KeyStore = createKeyStore(tx);
    const current = await keyStore.listSigningKeys();
    for (const alg of missingAlgorithms(current, clock)) {
      await keyStore.insertSigningKey(await generateSigningKey(alg, keyEncryptionKey, clock.nowSeconds()));
    }
    return keyStore.listSigningKeys();
  });
}

function missingAlgorithms(keys: readonly SigningKeyRecord[], clock: Clock): SigningAlg[] {
  const now = clock.nowSeconds();
  return SUPPORTED_SIGNING_ALGS.filter(
    (alg) =>
      !keys.some(
        (key) => key.alg === alg && key.activatesAt <= now && (key.retiresAt === null || key.retiresAt > now),
      ),
  );
}

/** A new key pair for `alg`, private part encrypted under KEY_ENCRYPTION_KEY, active immediately. */
export async function generateSigningKey(
  alg: SigningAlg,
  keyEncryptionKey: Uint8Array,
  now: number,
  activatesAt: number = now,
): Promise<SigningKeyRecord> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true, modulusLength: 2048 });
  const publicJwk = await exportJWK(publicKey);
  const privateJwk = await exportJWK(privateKey);
  // RFC 7638 thumbprint as kid: derived from the key material, so it is unique and stable.
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    alg,
    publicJwk: { ...publicJwk, kid, alg, use: 'sig' },
    privateKeyCiphertext: encryptPrivateKey(keyEncryptionKey, kid, JSON.stringify(privateJwk)),
    createdAt: now,
    activatesAt,
    retiresAt: null,
    removeAfter: null,
  };
}
