import { and, isNull, sql } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { users } from '../db/schema.js';
import { type AddressHolder, accountMailRecipient, addressOwner, mayVerifyAddress } from './account-mail.js';
import type { AccountStore } from './account-store.js';

/** The account store on the app's database (PGlite or PostgreSQL), or on a transaction of it. */
export function createDrizzleAccountStore(db: AppDatabase): AccountStore {
  async function addressHolders(email: string): Promise<AddressHolder[]> {
    const rows = await db
      .select({
        sub: users.sub,
        managedBy: users.managedBy,
        emailVerified: users.emailVerified,
        claimSources: users.claimSources,
      })
      .from(users)
      .where(and(sql`lower(${users.email}) = ${email.trim().toLowerCase()}`, isNull(users.disabledAt)))
      .orderBy(users.sub);
    return rows.map((row) => ({
      sub: row.sub,
      managedBy: row.managedBy,
      emailVerified: row.emailVerified,
      emailSource: row.claimSources.email,
    }));
  }

  return {
    addressHolders,
    accountMailRecipient: async (email, purpose) =>
      accountMailRecipient(await addressHolders(email), purpose),
    addressOwner: async (email) => addressOwner(await addressHolders(email))?.sub ?? null,
    mayVerifyAddress: async (sub, email) => mayVerifyAddress(sub, await addressHolders(email)),
  };
}
