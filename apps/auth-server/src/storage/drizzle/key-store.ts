import type { KeyStore, SigningAlg, SigningKeyRecord } from '@oidc-orders/oauth-core';
import { eq } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { signingKeys } from '../../db/schema.js';

export function createKeyStore(db: AppDatabase): KeyStore {
  return {
    async listSigningKeys() {
      const rows = await db.select().from(signingKeys).orderBy(signingKeys.createdAt, signingKeys.kid);
      return rows.map(signingKeyFromRow);
    },
    async insertSigningKey(key) {
      await db.insert(signingKeys).values(key);
    },
    async retireSigningKey(kid, retiresAt, removeAfter) {
      await db.update(signingKeys).set({ retiresAt, removeAfter }).where(eq(signingKeys.kid, kid));
    },
    async deleteSigningKey(kid) {
      await db.delete(signingKeys).where(eq(signingKeys.kid, kid));
    },
  };
}

export function signingKeyFromRow(row: typeof signingKeys.$inferSelect): SigningKeyRecord {
  return {
    kid: row.kid,
    alg: row.alg as SigningAlg,
    publicJwk: row.publicJwk,
    privateKeyCiphertext: row.privateKeyCiphertext,
    createdAt: row.createdAt,
    activatesAt: row.activatesAt,
    retiresAt: row.retiresAt,
    removeAfter: row.removeAfter,
  };
}
