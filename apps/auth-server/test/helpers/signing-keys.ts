import type { Clock, SigningKeyRecord } from '@oidc-orders/oauth-core';
import type { AppDatabase } from '../../src/db/client.js';
import { SUPPORTED_SIGNING_ALGS } from '../../src/keys/key-ring.js';
import { generateSigningKey } from '../../src/keys/signing-key-bootstrap.js';
import { createKeyStore } from '../../src/storage/drizzle-stores.js';

/**
 * Signing keys generated once per test worker and KEY_ENCRYPTION_KEY: generating an RSA key takes
 * 0.1–1 s (a random prime search), more than the rest of an app's start. Tests about key generation
 * itself (test/keys.test.ts) start on a database of their own, where the app generates them.
 */
const generated = new Map<string, Promise<SigningKeyRecord[]>>();

/**
 * Stores one active key per supported algorithm, as the app's first start would (created and
 * active at `clock`'s now, private parts encrypted under `keyEncryptionKey`); the app then finds
 * them instead of generating its own.
 */
export async function storeSigningKeys(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array,
  clock: Clock,
): Promise<void> {
  const cacheKey = Buffer.from(keyEncryptionKey).toString('base64url');
  let keys = generated.get(cacheKey);
  if (!keys) {
    keys = Promise.all(SUPPORTED_SIGNING_ALGS.map((alg) => generateSigningKey(alg, keyEncryptionKey, 0)));
    generated.set(cacheKey, keys);
  }
  const now = clock.nowSeconds();
  const store = createKeyStore(db);
  for (const key of await keys) await store.insertSigningKey({ ...key, createdAt: now, activatesAt: now });
}
