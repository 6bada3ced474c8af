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
    // Check and delete with no await in between: atomic on the JS thread.
    async consumePushedAuthorizationRequest(requestUriHash, clientId, now) {
      const request = requests.get(requestUriHash);
      if (request === undefined || request.clientId !== clientId || request.expiresAt <= now) return null;
      requests.delete(requestUriHash);
      return request;
    },
    async deleteExpiredPushedAuthorizationRequests(now) {
      let deleted = 0;
      for (const [hash, request] of requests) {
        if (request.expiresAt <= now) {
          requests.delete(hash);
          deleted += 1;
        }
      }
      return deleted;
    },
  };
}
