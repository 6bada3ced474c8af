import type { Resource, ResourceStore } from '@oidc-orders/oauth-core';

/**
 * The resources the server itself is (the administration API), beside the seed's: found and listed
 * like any other, so the token endpoint's RFC 8707 rules address tokens to them unchanged. They are
 * not in the database (the seed does not name them, so it never disables them).
 */
export function withBuiltInResources(store: ResourceStore, builtIn: readonly Resource[]): ResourceStore {
  const byId = new Map(builtIn.map((resource) => [resource.id, resource]));
  return {
    async findResource(id) {
      return byId.get(id) ?? (await store.findResource(id));
    },
    async listResources() {
      return [...(await store.listResources()).filter((resource) => !byId.has(resource.id)), ...builtIn];
    },
  };
}
