import type { Clock, RandomSource } from '@oidc-orders/oauth-core';
import { and, eq } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { passkeyCredentials } from '../db/schema.js';

/**
 * Passkeys and security keys (WebAuthn Level 3 public key credentials), several per user, each
 * named by its owner. Only public keys are stored: a copied table lets nobody sign in.
 */

/** A passkey as the account page lists it. */
export interface PasskeySummary {
  id: string;
  name: string;
  /** Backup state `BS` at the last use (WebAuthn §6.1.3): synced to other devices. */
  synced: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/** What verifying an assertion needs (WebAuthn §7.2), and whose credential it is. */
export interface StoredPasskey {
  id: string;
  sub: string;
  /** WebAuthn user handle (§5.4.3), base64url. */
  userHandle: string;
  /** COSE public key (§6.5.1.1), base64url. */
  publicKey: string;
  /** Signature counter (§6.1.1). */
  counter: number;
  transports: string[];
}

/** A credential a registration ceremony (§7.1) just verified. */
export interface NewPasskey extends StoredPasskey {
  name: string;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  aaguid: string;
}

/** What an authentication ceremony reported, kept for the next one. */
export interface PasskeyUse {
  /** §7.2 step 22: the authenticator's new signature counter. */
  counter: number;
  /** §6.1.3: the backup state may change over a credential's life. */
  backedUp: boolean;
}

const storedOf = (row: typeof passkeyCredentials.$inferSelect): StoredPasskey => ({
  id: row.id,
  sub: row.sub,
  userHandle: row.userHandle,
  publicKey: row.publicKey,
  counter: row.counter,
  transports: row.transports,
});

export function createPasskeyRepository(deps: { db: AppDatabase; clock: Clock; random: RandomSource }) {
  const { db, clock, random } = deps;
  const ofUser = (id: string, sub: string) =>
    and(eq(passkeyCredentials.id, id), eq(passkeyCredentials.sub, sub));

  async function rowsOf(sub: string) {
    return db
      .select()
      .from(passkeyCredentials)
      .where(eq(passkeyCredentials.sub, sub))
      .orderBy(passkeyCredentials.createdAt);
  }

  return {
    async hasAny(sub: string): Promise<boolean> {
      return (await rowsOf(sub)).length > 0;
    },

    async list(sub: string): Promise<PasskeySummary[]> {
      return (await rowsOf(sub)).map(({ id, name, backedUp, createdAt, lastUsedAt }) => ({
        id,
        name,
        synced: backedUp,
        createdAt,
        lastUsedAt,
      }));
    },

    /** The user's credentials, for `allowCredentials` and `excludeCredentials` (§5.4, §5.5). */
    async credentialsOf(sub: string): Promise<StoredPasskey[]> {
      return (await rowsOf(sub)).map(storedOf);
    },

    /**
     * The user's WebAuthn user handle: the one of their credentials, or a new random one (§5.4.3:
     * "64 random bytes" recommended, at most 64; 32 are as unguessable) for their first.
     */
    async userHandleOf(sub: string): Promise<string> {
      const [row] = await rowsOf(sub);
      return row?.userHandle ?? Buffer.from(random.bytes(32)).toString('base64url');
    },

    /** The credential an assertion names (§7.2 step 6), whoever owns it, or `null`. */
    async find(id: string): Promise<StoredPasskey | null> {
      const [row] = await db.select().from(passkeyCredentials).where(eq(passkeyCredentials.id, id));
      return row ? storedOf(row) : null;
    },

    /**
     * Stores a registered credential; `false` when the credential ID is already registered
     * (§7.1 step 26: "verify that the credentialId is not yet registered for any user").
     */
    async add(passkey: NewPasskey): Promise<boolean> {
      const now = clock.nowSeconds();
      const inserted = await db
        .insert(passkeyCredentials)
        .values({ ...passkey, createdAt: now, lastUsedAt: now })
        .onConflictDoNothing()
        .returning({ id: passkeyCredentials.id });
      return inserted.length === 1;
    },

    /**
     * Records a verified assertion. Conditional on the counter read before verifying, so of two
     * concurrent assertions with the same counter only one is recorded (§6.1.1 cloned authenticators).
     */
    async recordUse(passkey: StoredPasskey, use: PasskeyUse): Promise<boolean> {
      const rows = await db
        .update(passkeyCredentials)
        .set({ counter: use.counter, backedUp: use.backedUp, lastUsedAt: clock.nowSeconds() })
        .where(and(eq(passkeyCredentials.id, passkey.id), eq(passkeyCredentials.counter, passkey.counter)))
        .returning({ id: passkeyCredentials.id });
      return rows.length === 1;
    },

    async rename(id: string, sub: string, name: string): Promise<boolean> {
      const rows = await db
        .update(passkeyCredentials)
        .set({ name })
        .where(ofUser(id, sub))
        .returning({ id: passkeyCredentials.id });
      return rows.length === 1;
    },

    async remove(id: string, sub: string): Promise<boolean> {
      const rows = await db
        .delete(passkeyCredentials)
        .where(ofUser(id, sub))
        .returning({ id: passkeyCredentials.id });
      return rows.length === 1;
    },

    /** Removes every passkey of the user (admin `reset-mfa`); returns how many. */
    async removeAll(sub: string): Promise<number> {
      const rows = await db
        .delete(passkeyCredentials)
        .where(eq(passkeyCredentials.sub, sub))
        .returning({ id: passkeyCredentials.id });
      return rows.length;
    },
  };
}

export type PasskeyRepository = ReturnType<typeof createPasskeyRepository>;
