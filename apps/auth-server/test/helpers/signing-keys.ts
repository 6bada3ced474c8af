import type { Clock, SigningKeyRecord } from '@oidc-orders/oauth-core';
import { sql } from 'drizzle-orm';
import type { AppDatabase } from '../../src/db/client.js';
import { SUPPORTED_SIGNING_ALGS } from '../../src/keys/key-ring.js';
import { generateSigningKey, SIGNING_KEY_LOCK_KEY } from '../../src/keys/signing-key-bootstrap.js';
import { createKeyStore } from '../../src/storage/drizzle/stores.js';

/**
 * Signing keys generated once per test worker and KEY_ENCRYPTION_KEY: generating an RSA key takes
 * 0.1–1 s (a random prime search), more than the rest of an app's start. Tests about key generation
 * itself (test/keys.test.ts) ask startTestApp to let the app generate them.
 */
const generated = new Map<string, Promise<SigningKeyRecord[]>>();

/**
 * When the database holds no signing key yet, stores one per supported algorithm as the app's
 * first start would (created and active at `clock`'s now, private parts encrypted under
 * `keyEncryptionKey`); the app then finds them instead of generating its own. Under the app's own
 * lock, so two instances starting together on one database store them once.
 */
export async function storeSigningKeys(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array,
  clock: Clock,
): Promise<void> {
  const keys = await workerKeys(keyEncryptionKey);
  const now = clock.nowSeconds();
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SIGNING_KEY_LOCK_KEY})`);
    const store = createKeyStore(tx);
    if ((await store.listSigningKeys()).length > 0) return;
    for (const key of keys) await store.insertSigningKey({ ...key, createdAt: now, activatesAt: now });
  });
}

function workerKeys(keyEncryptionKey: Uint8Array): Promise<SigningKeyRecord[]> {
  const cacheKey = Buffer.from(keyEncryptionKey).toString('base64url');
  let keys = generated.get(cacheKey);
  if (!keys) {
    keys = Promise.all(SUPPORTED_SIGNING_ALGS.map((alg) => generateSigningKey(alg, keyEncryptionKey, 0)));
    generated.set(cacheKey, keys);
  }
  return keys;
}
