import { describeStoreContract } from '@oidc-orders/oauth-core/store-contract';
import { afterAll, beforeAll } from 'vitest';
import { createDrizzleStores, writeRegistryRecords } from '../src/storage/drizzle/stores.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';

// One database for the whole suite: the contract uses ids unique per test.
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describeStoreContract(`drizzle on ${databaseKind}`, async () => {
  const stores = createDrizzleStores(database.handle.db);
  return {
    stores,
    keys: stores.keys,
    async seed(data) {
      await writeRegistryRecords(database.handle.db, data, 1_700_000_000);
      stores.invalidateRegistry();
    },
    close: () => {},
  };
});
