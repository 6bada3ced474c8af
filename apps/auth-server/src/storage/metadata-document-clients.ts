import {
  type Client,
  type ClientStore,
  clientFromMetadataDocument,
  type MetadataDocumentPolicy,
  metadataDocumentUrl,
} from '@oidc-orders/oauth-core';
import type { FastifyBaseLogger } from 'fastify';
import { type GuardedFetchOptions, guardedFetchJson } from '../http/guarded-fetch.js';

/**
 * The client store with Client ID Metadata Documents in front: a `client_id` that is a document URL
 * under an allowed origin (oauth-core `metadataDocumentUrl`) is fetched with the guards of
 * src/http/guarded-fetch.ts and read by oauth-core `clientFromMetadataDocument`; every other id
 * goes to the registry as before. A document that cannot be fetched or read makes an unknown
 * client (`null`), its reason logged.
 */
export interface MetadataDocumentClientSettings {
  policy: MetadataDocumentPolicy;
  fetch: GuardedFetchOptions;
  lifetimes: Pick<Client, 'refreshTokenAbsoluteTtl' | 'refreshTokenSlidingTtl'>;
  /** The longest a document is reused, whatever its Cache-Control says. */
  maxCacheSeconds: number;
  /** How many documents are kept; the oldest is dropped first. */
  maxEntries: number;
  nowMs: () => number;
  log: FastifyBaseLogger;
}

interface CachedClient {
  client: Client;
  expiresAtMs: number;
}

export function withMetadataDocumentClients(
  base: ClientStore,
  settings: MetadataDocumentClientSettings,
): ClientStore {
  const cache = new Map<string, CachedClient>();
  const inFlight = new Map<string, Promise<Client | null>>();

  const load = async (clientId: string): Promise<Client | null> => {
    try {
      const fetched = await guardedFetchJson(clientId, settings.fetch);
      const client = clientFromMetadataDocument(clientId, fetched.body, settings.policy, settings.lifetimes);
      // RFC 9111 §4.2: reused while fresh, and never longer than the bound.
      const seconds = Math.min(fetched.maxAgeSeconds, settings.maxCacheSeconds);
      if (seconds > 0) remember(clientId, { client, expiresAtMs: settings.nowMs() + seconds * 1000 });
      return client;
    } catch (error) {
      const reason = (error as { detail?: string }).detail ?? (error as Error).message;
      settings.log.warn({ client_id: clientId.slice(0, 256), reason }, 'client metadata document refused');
      return null;
    }
  };

  const remember = (clientId: string, entry: CachedClient) => {
    cache.delete(clientId);
    cache.set(clientId, entry);
    while (cache.size > settings.maxEntries) cache.delete(cache.keys().next().value as string);
  };

  return {
    async findClient(clientId) {
      if (metadataDocumentUrl(clientId, settings.policy) === undefined) return base.findClient(clientId);
      const cached = cache.get(clientId);
      if (cached !== undefined && cached.expiresAtMs > settings.nowMs()) return cached.client;
      // One fetch per document at a time: concurrent lookups share it.
      let pending = inFlight.get(clientId);
      if (pending === undefined) {
        pending = load(clientId).finally(() => inFlight.delete(clientId));
        inFlight.set(clientId, pending);
      }
      return pending;
    },
  };
}
