import type { AppDatabase } from '../db/client.js';
import type { SeedClient } from '../schemas/seed.js';
import {
  deleteRegisteredClient,
  findRegisteredClient,
  listRegisteredClients,
} from '../storage/drizzle/registered-clients.js';

/**
 * The operator's view of clients that registered themselves (RFC 7591): list them, delete one, or
 * print one as a seed entry, so an operator can adopt it into the seed file (a seed entry of the
 * same id takes the client over: the registration ends, the file owns it). Seed clients are the
 * file's and never listed or deleted here.
 */

export class RegisteredClientNotFoundError extends Error {
  constructor(clientId: string) {
    super(`no registered client ${clientId} (seed clients are managed in the seed file)`);
    this.name = 'RegisteredClientNotFoundError';
  }
}

export interface RegisteredClientOverview {
  clientId: string;
  clientName: string;
  registeredAt: number;
  disabled: boolean;
  redirectUris: readonly string[];
}

/** The seed members a registration's metadata carries over under the same names. */
const EXPORTED_MEMBERS = [
  'client_name',
  'redirect_uris',
  'post_logout_redirect_uris',
  'grant_types',
  'scope',
  'token_endpoint_auth_method',
  'jwks',
  'jwks_uri',
  'request_uris',
  'id_token_signed_response_alg',
  'userinfo_signed_response_alg',
  'dpop_bound_access_tokens',
] as const;

export function createClientsAdmin(db: AppDatabase) {
  return {
    async list(): Promise<RegisteredClientOverview[]> {
      const rows = await listRegisteredClients(db);
      return rows.map((row) => ({
        clientId: row.clientId,
        clientName: row.clientName,
        registeredAt: row.registeredAt ?? 0,
        disabled: row.disabledAt !== null,
        redirectUris: (row.registrationMetadata?.redirect_uris as string[] | undefined) ?? [],
      }));
    },

    async delete(clientId: string): Promise<void> {
      if (!(await deleteRegisteredClient(db, clientId))) throw new RegisteredClientNotFoundError(clientId);
    },

    /** The seed entry of a registered client; its secret only as the hash the server keeps. */
    async exportSeedEntry(clientId: string): Promise<SeedClient> {
      const row = await findRegisteredClient(db, clientId);
      if (row === undefined) throw new RegisteredClientNotFoundError(clientId);
      const entry: Record<string, unknown> = { client_id: row.clientId };
      for (const member of EXPORTED_MEMBERS) {
        if (row.registrationMetadata[member] !== undefined) entry[member] = row.registrationMetadata[member];
      }
      if (row.secretHash !== null) entry.client_secret_hash = row.secretHash;
      return entry as SeedClient;
    },
  };
}
