import {
  describeDpopReplayStoreContract,
  describePushedAuthorizationRequestStoreContract,
} from '@oidc-orders/oauth-core/store-contract';
import { afterAll, beforeAll } from 'vitest';
import { createJtiReplayStore } from '../src/storage/drizzle/jti-replay.js';
import { createPushedAuthorizationRequestStore } from '../src/storage/drizzle/pushed-authorization-requests.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './helpers/database.js';

// One database for the whole suite: the contracts use keys unique per test.
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());

describeDpopReplayStoreContract(`drizzle on ${databaseKind}`, () => ({
  store: createJtiReplayStore(database.handle.db),
  close: () => {},
}));

describePushedAuthorizationRequestStoreContract(`drizzle on ${databaseKind}`, () => ({
  store: createPushedAuthorizationRequestStore(database.handle.db),
  close: () => {},
}));
