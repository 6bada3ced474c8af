import type { Clock, SigningKeyRecord } from '@oidc-orders/oauth-core';
import { AUDIT_EVENTS } from '../audit.js';
import type { AppDatabase } from '../db/client.js';
import { minimumActivationDelaySeconds, rotateSigningKeys } from '../keys/rotation.js';
import { createKeyStore } from '../storage/drizzle/stores.js';
import { type AdminActor, type AdminAuditRecorder, actorFields } from './admin-audit.js';

/**
 * The signing keys as an operator sees them (never a private part) and their rotation, the same as
 * `keys list` and `keys rotate`: a new key per algorithm, published now, signing only after every
 * relying party's cached JWKS can have it (RFC 7517; OIDC Core §10.1.1).
 */
export interface KeysAdminDeps {
  db: AppDatabase;
  keyEncryptionKey: Uint8Array;
  clock: Clock;
  /** METADATA_MAX_AGE: how long relying parties may cache the JWKS. */
  metadataMaxAgeSeconds: number;
  audit: AdminAuditRecorder;
  /** Lets this instance publish the new keys at once (the others within their refresh interval). */
  reloadKeys?: () => Promise<void>;
}

export interface SigningKeyStatus {
  kid: string;
  alg: string;
  /** `next`: published, not signing yet; `active`: signing; `retired`: published only; `expired`: due for deletion. */
  state: 'next' | 'active' | 'retired' | 'expired';
  createdAt: number;
  activatesAt: number;
  retiresAt: number | null;
  removeAfter: number | null;
  /** Seconds since the key was created. */
  ageSeconds: number;
}

/** Seconds the retired keys stay published, as `keys rotate`'s default: the longest token lifetime. */
const KEEP_PUBLISHED_SECONDS = 86_400;

function stateOf(key: SigningKeyRecord, now: number): SigningKeyStatus['state'] {
  if (key.removeAfter !== null && key.removeAfter <= now) return 'expired';
  if (key.retiresAt !== null && key.retiresAt <= now) return 'retired';
  return key.activatesAt > now ? 'next' : 'active';
}

export function createKeysAdmin(deps: KeysAdminDeps) {
  const keyStore = createKeyStore(deps.db);
  return {
    async status(): Promise<SigningKeyStatus[]> {
      const now = deps.clock.nowSeconds();
      return (await keyStore.listSigningKeys()).map((key) => ({
        kid: key.kid,
        alg: key.alg,
        state: stateOf(key, now),
        createdAt: key.createdAt,
        activatesAt: key.activatesAt,
        retiresAt: key.retiresAt,
        removeAfter: key.removeAfter,
        ageSeconds: Math.max(0, now - key.createdAt),
      }));
    },

    /** Always the safe delay: an API has no `--force` (a too early key breaks every relying party). */
    async rotate(by: AdminActor) {
      const activateInSeconds = Math.max(900, minimumActivationDelaySeconds(deps.metadataMaxAgeSeconds));
      const result = await rotateSigningKeys(deps.db, deps.keyEncryptionKey, deps.clock, {
        activateInSeconds,
        keepPublishedSeconds: KEEP_PUBLISHED_SECONDS,
      });
      await deps.reloadKeys?.();
      const added = result.added.map((key) => key.kid);
      await deps.audit(AUDIT_EVENTS.keysRotated, {
        ...actorFields(by),
        added,
        retired: result.retired,
        deleted: result.deleted,
      });
      return {
        added: result.added.map((key) => ({ kid: key.kid, alg: key.alg, activatesAt: key.activatesAt })),
        retired: result.retired,
        deleted: result.deleted,
      };
    },
  };
}

export type KeysAdmin = ReturnType<typeof createKeysAdmin>;
