import type { ClientStore, ResourceStore, UserStore } from './clients.js';
import type { DeviceCodeStore } from './device-codes.js';
import type { AuthorizationCodeStore, GrantStore } from './grants.js';
import type { AccessTokenStore, RefreshTokenStore } from './tokens.js';

export type { ClientStore, ResourceStore, UserStore } from './clients.js';
export type { DeviceCodePoll, DeviceCodeStore } from './device-codes.js';
export type { AuthorizationCodeStore, AuthorizationCodeWithGrantAndUser, GrantStore } from './grants.js';
export type { KeyStore, SigningKeyRecord } from './keys.js';
export type {
  AccessTokenStore,
  AccessTokenWithUser,
  IssuedTokenRecords,
  RefreshTokenStore,
  RefreshTokenWithGrantAndUser,
} from './tokens.js';

/** The stores whose writes must commit or roll back together. */
export interface TokenStores {
  grants: GrantStore;
  codes: AuthorizationCodeStore;
  refreshTokens: RefreshTokenStore;
  accessTokens: AccessTokenStore;
  /** RFC 8628 device authorizations: approval writes the grant in the same transaction. */
  deviceCodes: DeviceCodeStore;
}

/**
 * Everything the protocol layer reads and writes. `transaction` runs `work` against stores bound
 * to one database transaction: every write inside commits together or not at all, and an error
 * thrown by `work` rolls back and is rethrown unchanged.
 */
export interface ProtocolStores extends TokenStores {
  clients: ClientStore;
  resources: ResourceStore;
  users: UserStore;
  transaction<T>(work: (stores: TokenStores) => Promise<T>): Promise<T>;
}
