/**
 * The store contract as one reusable Vitest suite (`@oidc-orders/oauth-core/store-contract`), one
 * file per store. Every implementation (the in-memory twin, the Drizzle stores in apps/auth-server)
 * runs it:
 *
 * ```ts
 * describeStoreContract('drizzle on PGlite', async () => {
 *   const db = await openTestDatabase();
 *   const stores = createDrizzleStores(db);
 *   return { stores, keys: stores.keys, seed: (data) => applySeed(db, data), close: () => db.close() };
 * });
 * ```
 *
 * `makeStores` is called before every test and `close` after it. Tests use ids unique to the test
 * (and list assertions check inclusion), so a fixture may share one database across tests.
 * Written against the interfaces only.
 */
import { describe } from 'vitest';
import { describeAccessTokenStoreContract } from './access-tokens.js';
import { describeAuthorizationCodeStoreContract } from './authorization-codes.js';
import { type StoreContractFixture, useContractContext } from './context.js';
import { describeDeviceCodeStoreContract } from './device-codes.js';
import { describeGrantStoreContract } from './grants.js';
import { describeKeyStoreContract } from './keys.js';
import { describeRedemptionFastPathContract } from './redemption.js';
import { describeRefreshTokenStoreContract } from './refresh-tokens.js';
import { describeRegistryStoreContract } from './registry.js';
import { describeTransactionContract } from './transaction.js';

export type { StoreContractFixture } from './context.js';
export { type DpopReplayStoreFixture, describeDpopReplayStoreContract } from './dpop-replay.js';
export {
  describePushedAuthorizationRequestStoreContract,
  type PushedAuthorizationRequestStoreFixture,
} from './pushed-authorization-requests.js';

export function describeStoreContract(
  name: string,
  makeStores: () => Promise<StoreContractFixture> | StoreContractFixture,
): void {
  describe(`store contract: ${name}`, () => {
    const context = useContractContext(makeStores);
    describeRegistryStoreContract(context);
    describeGrantStoreContract(context);
    describeAuthorizationCodeStoreContract(context);
    describeRefreshTokenStoreContract(context);
    describeRedemptionFastPathContract(context);
    describeAccessTokenStoreContract(context);
    describeDeviceCodeStoreContract(context);
    describeTransactionContract(context);
    describeKeyStoreContract(context);
  });
}
