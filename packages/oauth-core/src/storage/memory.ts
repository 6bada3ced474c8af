import type {
  AuthorizationCode,
  Client,
  DeviceCode,
  Grant,
  OpaqueAccessToken,
  RefreshToken,
  Resource,
  User,
} from '../model.js';
import type { DeviceCodeStore } from './device-codes.js';
import type { AuthorizationCodeStore, GrantStore } from './grants.js';
import type { ClientStore, ProtocolStores, ResourceStore, TokenStores, UserStore } from './index.js';
import type { KeyStore, SigningKeyRecord } from './keys.js';
import type { AccessTokenStore, IssuedTokenRecords, RefreshTokenStore } from './tokens.js';

/** Registry data a store set starts with (clients, resources, users). */
export interface StoreSeed {
  clients?: readonly Client[];
  resources?: readonly Resource[];
  users?: readonly User[];
}

/** The in-memory twin of every store, same contracts; for unit tests and nothing else. */
export interface MemoryStores extends ProtocolStores {
  keys: KeyStore;
  /** Adds or replaces clients, resources and users (idempotent, like the server's seed loader). */
  seed(data: StoreSeed): void;
}

interface Tables {
  clients: Map<string, Client>;
  resources: Map<string, Resource>;
  users: Map<string, User>;
  grants: Map<string, Grant>;
  codes: Map<string, AuthorizationCode>;
  refreshTokens: Map<string, RefreshToken>;
  accessTokens: Map<string, OpaqueAccessToken>;
  /** jti → expiresAt */
  revokedJtis: Map<string, number>;
  keys: Map<string, SigningKeyRecord>;
  /** deviceCodeHash → code */
  deviceCodes: Map<string, DeviceCode>;
}

/** Records are copied in and out, so a caller mutating an object never changes stored state. */
const copy = <T>(value: T): T => structuredClone(value);

/** Records a way to undo each write, so a failed transaction can roll back. */
type UndoLog = Array<() => void>;

function setWithUndo<K, V>(map: Map<K, V>, key: K, value: V, undo: UndoLog | null): void {
  if (undo !== null) {
    const had = map.has(key);
    const previous = map.get(key);
    undo.push(() => {
      if (had) map.set(key, previous as V);
      else map.delete(key);
    });
  }
  map.set(key, value);
}

function findCopy<V>(map: Map<string, V>, key: string): V | null {
  const value = map.get(key);
  return value === undefined ? null : copy(value);
}

function createTokenStores(t: Tables, undo: UndoLog | null): TokenStores {
  // A fast-path redemption checks its writes first (a duplicate throws before anything changes),
  // then marks the code or token used and writes, all in one turn of the JS thread.
  const checkIssued = ({ accessToken, refreshToken }: IssuedTokenRecords) => {
    if (accessToken !== null && t.accessTokens.has(accessToken.tokenHash)) {
      throw new Error('access token already exists');
    }
    if (refreshToken !== null && t.refreshTokens.has(refreshToken.tokenHash)) {
      throw new Error('refresh token already exists');
    }
  };
  const writeIssued = ({ accessToken, refreshToken }: IssuedTokenRecords) => {
    if (accessToken !== null) setWithUndo(t.accessTokens, accessToken.tokenHash, copy(accessToken), undo);
    if (refreshToken !== null) setWithUndo(t.refreshTokens, refreshToken.tokenHash, copy(refreshToken), undo);
  };

  const grants: GrantStore = {
    async createGrant(grant) {
      if (t.grants.has(grant.id)) throw new Error(`grant ${grant.id} already exists`);
      setWithUndo(t.grants, grant.id, copy(grant), undo);
    },
    async findGrant(id) {
      const grant = t.grants.get(id);
      return grant === undefined ? null : copy(grant);
    },
    async findGrantsBySid(sid) {
      return [...t.grants.values()].filter((grant) => grant.sid === sid).map(copy);
    },
    async revokeGrant(id, at) {
      const grant = t.grants.get(id);
      if (grant !== undefined && grant.revokedAt === null) {
        setWithUndo(t.grants, id, { ...grant, revokedAt: at }, undo);
      }
      for (const [hash, token] of t.refreshTokens) {
        if (token.grantId === id && token.revokedAt === null) {
          setWithUndo(t.refreshTokens, hash, { ...token, revokedAt: at }, undo);
        }
      }
      for (const [hash, token] of t.accessTokens) {
        if (token.grantId === id && token.revokedAt === null) {
          setWithUndo(t.accessTokens, hash, { ...token, revokedAt: at }, undo);
        }
      }
    },
  };

  const codes: AuthorizationCodeStore = {
    async createAuthorizationCode(code) {
      if (t.codes.has(code.codeHash)) throw new Error('authorization code already exists');
      setWithUndo(t.codes, code.codeHash, copy(code), undo);
    },
    async findAuthorizationCode(codeHash) {
      const code = t.codes.get(codeHash);
      return code === undefined ? null : copy(code);
    },
    async consumeAuthorizationCode(codeHash, at) {
      // Check and set with no await in between: atomic on the single JS thread.
      const code = t.codes.get(codeHash);
      if (code === undefined || code.usedAt !== null) return false;
      setWithUndo(t.codes, codeHash, { ...code, usedAt: at }, undo);
      return true;
    },
    async findAuthorizationCodeWithGrantAndUser(codeHash) {
      const code = t.codes.get(codeHash);
      if (code === undefined) return null;
      return { code: copy(code), grant: findCopy(t.grants, code.grantId), user: findCopy(t.users, code.sub) };
    },
    async redeemAuthorizationCode(codeHash, at, issued) {
      const code = t.codes.get(codeHash);
      if (code === undefined || code.usedAt !== null) return false;
      checkIssued(issued);
      setWithUndo(t.codes, codeHash, { ...code, usedAt: at }, undo);
      writeIssued(issued);
      return true;
    },
    async createAuthorizationCodeWithGrant(grant, code) {
      // Both checks before either write: nothing half-written, as the database's one statement.
      if (t.codes.has(code.codeHash)) throw new Error('authorization code already exists');
      if (t.grants.has(grant.id)) throw new Error('grant already exists');
      setWithUndo(t.grants, grant.id, copy(grant), undo);
      setWithUndo(t.codes, code.codeHash, copy(code), undo);
    },
  };

  const refreshTokens: RefreshTokenStore = {
    async createRefreshToken(token) {
      if (t.refreshTokens.has(token.tokenHash)) throw new Error('refresh token already exists');
      setWithUndo(t.refreshTokens, token.tokenHash, copy(token), undo);
    },
    async findRefreshToken(tokenHash) {
      const token = t.refreshTokens.get(tokenHash);
      return token === undefined ? null : copy(token);
    },
    async markRefreshTokenUsed(tokenHash, at) {
      const token = t.refreshTokens.get(tokenHash);
      if (token === undefined || token.usedAt !== null || token.revokedAt !== null) return false;
      setWithUndo(t.refreshTokens, tokenHash, { ...token, usedAt: at }, undo);
      return true;
    },
    async findRefreshTokenSuccessor(parentHash) {
      for (const token of t.refreshTokens.values()) {
        if (token.parentHash === parentHash) return copy(token);
      }
      return null;
    },
    async revokeRefreshToken(tokenHash, at) {
      const token = t.refreshTokens.get(tokenHash);
      if (token !== undefined && token.revokedAt === null) {
        setWithUndo(t.refreshTokens, tokenHash, { ...token, revokedAt: at }, undo);
      }
    },
    async findRefreshTokenWithGrantAndUser(tokenHash) {
      const token = t.refreshTokens.get(tokenHash);
      if (token === undefined) return null;
      return {
        token: copy(token),
        grant: findCopy(t.grants, token.grantId),
        user: findCopy(t.users, token.sub),
      };
    },
    async rotateRefreshToken(tokenHash, at, issued) {
      const token = t.refreshTokens.get(tokenHash);
      if (token === undefined || token.usedAt !== null || token.revokedAt !== null) return false;
      checkIssued(issued);
      setWithUndo(t.refreshTokens, tokenHash, { ...token, usedAt: at }, undo);
      writeIssued(issued);
      return true;
    },
  };

  const accessTokens: AccessTokenStore = {
    async createAccessToken(token) {
      if (t.accessTokens.has(token.tokenHash)) throw new Error('access token already exists');
      setWithUndo(t.accessTokens, token.tokenHash, copy(token), undo);
    },
    async findAccessToken(tokenHash) {
      const token = t.accessTokens.get(tokenHash);
      return token === undefined ? null : copy(token);
    },
    async findAccessTokenWithUser(tokenHash) {
      const token = t.accessTokens.get(tokenHash);
      if (token === undefined) return null;
      return { token: copy(token), user: findCopy(t.users, token.sub) };
    },
    async revokeAccessToken(tokenHash, at) {
      const token = t.accessTokens.get(tokenHash);
      if (token !== undefined && token.revokedAt === null) {
        setWithUndo(t.accessTokens, tokenHash, { ...token, revokedAt: at }, undo);
      }
    },
    async revokeJwtAccessToken(jti, expiresAt) {
      setWithUndo(t.revokedJtis, jti, Math.max(expiresAt, t.revokedJtis.get(jti) ?? 0), undo);
    },
    async isJwtAccessTokenRevoked(jti) {
      return t.revokedJtis.has(jti);
    },
  };

  // Each conditional transition checks and sets with no await in between: atomic on the JS thread.
  const deviceCodes: DeviceCodeStore = {
    async createDeviceCode(code) {
      for (const existing of t.deviceCodes.values()) {
        if (existing.userCodeHash === code.userCodeHash) return false;
      }
      if (t.deviceCodes.has(code.deviceCodeHash)) throw new Error('device code already exists');
      setWithUndo(t.deviceCodes, code.deviceCodeHash, copy(code), undo);
      return true;
    },
    async findDeviceCode(deviceCodeHash) {
      const code = t.deviceCodes.get(deviceCodeHash);
      return code === undefined ? null : copy(code);
    },
    async findDeviceCodeByUserCode(userCodeHash) {
      for (const code of t.deviceCodes.values()) if (code.userCodeHash === userCodeHash) return copy(code);
      return null;
    },
    async approveDeviceCode(deviceCodeHash, { grantId, sub, at }) {
      const code = t.deviceCodes.get(deviceCodeHash);
      if (code === undefined || code.status !== 'pending' || code.expiresAt <= at) return false;
      setWithUndo(
        t.deviceCodes,
        deviceCodeHash,
        { ...code, status: 'approved', grantId, sub, decidedAt: at },
        undo,
      );
      return true;
    },
    async denyDeviceCode(deviceCodeHash, { sub, at }) {
      const code = t.deviceCodes.get(deviceCodeHash);
      if (code === undefined || code.status !== 'pending' || code.expiresAt <= at) return false;
      setWithUndo(t.deviceCodes, deviceCodeHash, { ...code, status: 'denied', sub, decidedAt: at }, undo);
      return true;
    },
    async recordDeviceCodePoll(deviceCodeHash, at) {
      const code = t.deviceCodes.get(deviceCodeHash);
      if (code === undefined) return null;
      setWithUndo(t.deviceCodes, deviceCodeHash, { ...code, lastPolledAt: at }, undo);
      return { previousPollAt: code.lastPolledAt, interval: code.interval };
    },
    async increaseDeviceCodeInterval(deviceCodeHash, seconds) {
      const code = t.deviceCodes.get(deviceCodeHash);
      if (code !== undefined) {
        setWithUndo(t.deviceCodes, deviceCodeHash, { ...code, interval: code.interval + seconds }, undo);
      }
    },
    async redeemDeviceCode(deviceCodeHash, at) {
      const code = t.deviceCodes.get(deviceCodeHash);
      if (code === undefined || code.status !== 'approved') return false;
      setWithUndo(t.deviceCodes, deviceCodeHash, { ...code, status: 'redeemed', redeemedAt: at }, undo);
      return true;
    },
    async deleteExpiredDeviceCodes(before) {
      for (const [hash, code] of t.deviceCodes) {
        if (code.expiresAt <= before) {
          undo?.push(() => t.deviceCodes.set(hash, code));
          t.deviceCodes.delete(hash);
        }
      }
    },
  };

  return { grants, codes, refreshTokens, accessTokens, deviceCodes };
}

/**
 * In-memory stores. `transaction` runs one unit of work at a time (a queue, like SERIALIZABLE);
 * each write applies at once and logs its undo, so when `work` throws every write is undone and the
 * error is rethrown unchanged. The conditional updates check and set without yielding, so they are
 * atomic whether called inside a transaction or not.
 */
export function createMemoryStores(seed: StoreSeed = {}): MemoryStores {
  const t: Tables = {
    clients: new Map(),
    resources: new Map(),
    users: new Map(),
    grants: new Map(),
    codes: new Map(),
    refreshTokens: new Map(),
    accessTokens: new Map(),
    revokedJtis: new Map(),
    keys: new Map(),
    deviceCodes: new Map(),
  };

  const clients: ClientStore = {
    async findClient(clientId) {
      const client = t.clients.get(clientId);
      return client === undefined ? null : copy(client);
    },
  };
  const resources: ResourceStore = {
    async findResource(id) {
      const resource = t.resources.get(id);
      return resource === undefined ? null : copy(resource);
    },
    async listResources() {
      return copy([...t.resources.values()]);
    },
  };
  const users: UserStore = {
    async findUserBySub(sub) {
      const user = t.users.get(sub);
      return user === undefined ? null : copy(user);
    },
    async findUserByUsername(username) {
      for (const user of t.users.values()) if (user.username === username) return copy(user);
      return null;
    },
  };
  const keys: KeyStore = {
    async listSigningKeys() {
      return copy([...t.keys.values()].sort((a, b) => a.createdAt - b.createdAt));
    },
    async insertSigningKey(key) {
      if (t.keys.has(key.kid)) throw new Error(`signing key ${key.kid} already exists`);
      t.keys.set(key.kid, copy(key));
    },
    async retireSigningKey(kid, retiresAt, removeAfter) {
      const key = t.keys.get(kid);
      if (key !== undefined) t.keys.set(kid, { ...key, retiresAt, removeAfter });
    },
    async deleteSigningKey(kid) {
      t.keys.delete(kid);
    },
  };

  let queue: Promise<unknown> = Promise.resolve();

  const stores: MemoryStores = {
    ...createTokenStores(t, null),
    clients,
    resources,
    users,
    keys,
    transaction<T>(work: (tx: TokenStores) => Promise<T>): Promise<T> {
      const run = async (): Promise<T> => {
        const undo: UndoLog = [];
        try {
          return await work(createTokenStores(t, undo));
        } catch (error) {
          for (const step of undo.reverse()) step();
          throw error;
        }
      };
      const result = queue.then(run, run);
      queue = result.catch(() => undefined);
      return result;
    },
    seed(data) {
      for (const client of data.clients ?? []) t.clients.set(client.clientId, copy(client));
      for (const resource of data.resources ?? []) t.resources.set(resource.id, copy(resource));
      for (const user of data.users ?? []) t.users.set(user.sub, copy(user));
    },
  };
  stores.seed(seed);
  return stores;
}
