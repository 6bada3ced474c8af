import type { Clock, SigningKeyRecord } from '@oidc-orders/oauth-core';
import { sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { createKeyStore } from '../storage/drizzle/stores.js';
import { SUPPORTED_SIGNING_ALGS } from './key-ring.js';
import { generateSigningKey, SIGNING_KEY_LOCK_KEY } from './signing-key-bootstrap.js';

/** How often each instance re-reads the key table. Rotation activates new keys later than this. */
export const KEY_REFRESH_INTERVAL_MS = 60_000;

export interface RotationOptions {
  /**
   * Seconds between publication and first use of the new keys. Must exceed how long relying
   * parties may cache the JWKS (METADATA_MAX_AGE) plus the instances' key refresh interval, so
   * nobody sees a token signed by a key it has not fetched yet.
   */
  activateInSeconds: number;
  /** Seconds the retired keys stay published after they stop signing: the longest token lifetime. */
  keepPublishedSeconds: number;
}

/**
 * The shortest safe `activateInSeconds`: relying parties may cache the JWKS for METADATA_MAX_AGE,
 * and each instance re-reads the key table once per KEY_REFRESH_INTERVAL_MS; a key must be
 * published everywhere (and fetched by everyone) before the first token it signs.
 */
export function minimumActivationDelaySeconds(metadataMaxAgeSeconds: number): number {
  return metadataMaxAgeSeconds + KEY_REFRESH_INTERVAL_MS / 1000;
}

export interface RotationResult {
  added: SigningKeyRecord[];
  retired: string[];
  deleted: string[];
}

/**
 * Adds a new key per algorithm that activates later, retires the current ones at that moment, and
 * deletes keys past their `removeAfter`. Runs under the same advisory lock as the first-start key
 * creation, so concurrent rotations or starts cannot interleave.
 */
export async function rotateSigningKeys(
  db: AppDatabase,
  keyEncryptionKey: Uint8Array,
  clock: Clock,
  options: RotationOptions,
): Promise<RotationResult> {
  const now = clock.nowSeconds();
  const activatesAt = now + options.activateInSeconds;
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${SIGNING_KEY_LOCK_KEY})`);
    const keyStore = createKeyStore(tx);
    const result: RotationResult = { added: [], retired: [], deleted: [] };
    for (const key of await keyStore.listSigningKeys()) {
      if (key.removeAfter !== null && key.removeAfter <= now) {
        await keyStore.deleteSigningKey(key.kid);
        result.deleted.push(key.kid);
      } else if (key.retiresAt === null || key.retiresAt > activatesAt) {
        await keyStore.retireSigningKey(key.kid, activatesAt, activatesAt + options.keepPublishedSeconds);
        result.retired.push(key.kid);
      }
    }
    for (const alg of SUPPORTED_SIGNING_ALGS) {
      const key = await generateSigningKey(alg, keyEncryptionKey, now, activatesAt);
      await keyStore.insertSigningKey(key);
      result.added.push(key);
    }
    return result;
  });
}
