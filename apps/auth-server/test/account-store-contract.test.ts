import { eq } from 'drizzle-orm';
import { afterAll, beforeAll } from 'vitest';
import { createDrizzleAccountStore } from '../src/accounts/drizzle-account-store.js';
import { users } from '../src/db/schema.js';
import { describeAccountStoreContract } from './helpers/account-store-contract.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';

// One database for the whole suite: the contract uses names unique per test.
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describeAccountStoreContract(`drizzle on ${databaseKind}`, async () => {
  const { db } = database.handle;
  return {
    store: createDrizzleAccountStore(db),
    // What the seed loader and `users add` write (src/accounts/drizzle/seed-users.ts, src/admin/).
    async addLocalAccount(account) {
      await db.insert(users).values({
        sub: account.sub,
        username: account.sub,
        passwordHash: 'scrypt$placeholder',
        email: account.email,
        emailVerified: account.emailVerified,
        managedBy: account.managedBy,
        updatedAt: 1_800_000_000,
      });
    },
    async emailVerifiedOf(sub) {
      const [row] = await db
        .select({ emailVerified: users.emailVerified })
        .from(users)
        .where(eq(users.sub, sub));
      return row?.emailVerified;
    },
  };
});
