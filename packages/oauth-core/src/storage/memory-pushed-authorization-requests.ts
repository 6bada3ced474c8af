import type {
  PushedAuthorizationRequest,
  PushedAuthorizationRequestStore,
} from './pushed-authorization-requests.js';

/** The in-memory twin of `PushedAuthorizationRequestStore` (same contract); for unit tests. */
export function createMemoryPushedAuthorizationRequestStore(): PushedAuthorizationRequestStore {
  const requests = new Map<string, PushedAuthorizationRequest>();
  return {
    async savePushedAuthorizationRequest(request) {
      if (requests.has(request.requestUriHash))
        throw new Error('pushed authorization request already exists');
      requests.set(request.requestUriHash, structuredClone(request));
    },
    async findPushedAuthorizationRequest(requestUriHash, clientId, now) {
      const request = requests.get(requestUriHash);
      if (request === undefined || request.clientId !== clientId) return null;
      if (request.expiresAt <= now || request.usedAt !== null) return null;
      return structuredClone(request);
    },
    // Check and set with no await in between: atomic on the JS thread.
    async markPushedAuthorizationRequestUsed(requestUriHash, clientId, now) {
      const request = requests.get(requestUriHash);
      if (request === undefined || request.clientId !== clientId || request.usedAt !== null) return false;
      request.usedAt = now;
      return true;
    },
    async deleteExpiredPushedAuthorizationRequests(before) {
      let deleted = 0;
      for (const [hash, request] of requests) {
        if (request.expiresAt <= before) {
          requests.delete(hash);
          deleted += 1;
        }
      }
      return deleted;
    },
  };
}
