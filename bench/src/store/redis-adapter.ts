/**
 * oidc-provider's storage adapter on Redis, written for the bench from the adapter contract the
 * library documents (one instance per model name; `upsert`, `find`, `findByUid`, `findByUserCode`,
 * `consume`, `destroy`, `revokeByGrantId`; payloads expire after `expiresIn` seconds).
 *
 * Layout: each model instance is a hash `<Model>:<id>` with the JSON payload in `payload` and the
 * consumption time in `consumed`, so consuming is one HSET rather than a read-modify-write. Indexes
 * that find a record by something other than its id are plain keys expiring with it, and the keys
 * issued under one grant are a list `grant:<grantId>` so a grant revokes in one round trip.
 */
import type { Redis } from 'ioredis';
import type { Adapter, AdapterPayload } from 'oidc-provider';

/** The models that carry a `grantId` and must go when their grant is revoked (RFC 6749 §10.5, §10.4). */
const GRANT_BOUND_MODELS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
]);

const grantKey = (grantId: string) => `grant:${grantId}`;
const sessionUidKey = (uid: string) => `sessionUid:${uid}`;
const userCodeKey = (userCode: string) => `userCode:${userCode}`;
const epochSeconds = () => Math.floor(Date.now() / 1000);

export class RedisAdapter implements Adapter {
  constructor(
    private readonly redis: Redis,
    readonly name: string,
  ) {}

  private key(id: string): string {
    return `${this.name}:${id}`;
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const key = this.key(id);
    const write = this.redis.multi();
    // An upsert replaces the record whole: a stale `consumed` must not survive it.
    write.del(key);
    write.hset(key, 'payload', JSON.stringify(payload));
    const ttl = expiresIn !== undefined && expiresIn > 0 ? expiresIn : undefined;
    if (ttl) write.expire(key, ttl);
    const index = this.indexKey(payload);
    if (index) {
      write.set(index, id);
      if (ttl) write.expire(index, ttl);
    }
    if (GRANT_BOUND_MODELS.has(this.name) && payload.grantId) {
      const list = grantKey(payload.grantId);
      write.rpush(list, key);
      // The list lives as long as its longest-lived member: NX sets a first expiry, GT only extends it.
      if (ttl) write.expire(list, ttl, 'NX').expire(list, ttl, 'GT');
    }
    await write.exec();
  }

  private indexKey(payload: AdapterPayload): string | undefined {
    if (this.name === 'Session' && payload.uid) return sessionUidKey(payload.uid);
    if (payload.userCode) return userCodeKey(payload.userCode);
    return undefined;
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    const [payload, consumed] = await this.redis.hmget(this.key(id), 'payload', 'consumed');
    if (!payload) return undefined;
    const found = JSON.parse(payload) as AdapterPayload;
    return consumed ? { ...found, consumed: Number(consumed) } : found;
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(sessionUidKey(uid));
    return id ? this.find(id) : undefined;
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    const id = await this.redis.get(userCodeKey(userCode));
    return id ? this.find(id) : undefined;
  }

  /**
   * RFC 6749 §4.1.2: a code is single-use; the provider reads `consumed` to detect a replay. One
   * HSET, as cheap as the in-memory adapter's assignment: the provider consumes only a record it
   * has just found, and one that expired in between leaves a payload-less hash `find` ignores.
   */
  async consume(id: string): Promise<void> {
    await this.redis.hset(this.key(id), 'consumed', epochSeconds());
  }

  async destroy(id: string): Promise<void> {
    await this.redis.del(this.key(id));
  }

  /** Everything issued under the grant goes at once (RFC 6749 §4.1.2 code replay, §10.4 refresh reuse). */
  async revokeByGrantId(grantId: string): Promise<void> {
    const list = grantKey(grantId);
    const keys = await this.redis.lrange(list, 0, -1);
    await this.redis.del(...keys, list);
  }
}

/** What `Configuration.adapter` takes: a constructor-like factory, one adapter per model name. */
export function redisAdapterFactory(redis: Redis): (name: string) => Adapter {
  return (name) => new RedisAdapter(redis, name);
}
