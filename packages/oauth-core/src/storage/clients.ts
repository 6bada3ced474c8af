import type { Client, Resource, User } from '../model.js';

/** Read-only registry of clients. Implementations may cache; the server invalidates on reseed. */
export interface ClientStore {
  /** The client, or `null` when unknown. Never throws for an unknown id. */
  findClient(clientId: string): Promise<Client | null>;
}

export interface ResourceStore {
  /** Exact match on `Resource.id` (RFC 8707 `resource`, RFC 8693 `audience`). */
  findResource(id: string): Promise<Resource | null>;
  /** Every resource; small and cacheable. Used to map scopes to audiences. */
  listResources(): Promise<readonly Resource[]>;
}

export interface UserStore {
  findUserBySub(sub: string): Promise<User | null>;
  /** Username lookup for the login form; exact, case-sensitive match. */
  findUserByUsername(username: string): Promise<User | null>;
}
