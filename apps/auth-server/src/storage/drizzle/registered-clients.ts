import type { Client } from '@oidc-orders/oauth-core';
import { and, eq, isNotNull, lt, sql } from 'drizzle-orm';
import type { AppDatabase } from '../../db/client.js';
import { clients, grants } from '../../db/schema.js';
import { writeRegistryRecords } from './registry.js';

/**
 * Clients that registered themselves (RFC 7591), in the `clients` table beside the seed's, told
 * apart by `registered_at`. Every function here touches registered rows only, so no registration
 * request can read, change or delete a seed client. Callers invalidate the registry snapshot after
 * a change (`invalidateRegistry`).
 */

export interface RegisteredClientRow {
  clientId: string;
  registeredAt: number;
  registrationAccessTokenHash: string | null;
  registrationMetadata: Record<string, unknown>;
  secretHash: string | null;
  disabledAt: number | null;
}

export interface Registration {
  client: Client;
  metadata: Record<string, unknown>;
  registrationAccessTokenHash: string;
}

/**
 * Inserts a new registered client. The id is the server's random one; should it ever exist
 * already (a seed client's id above all), the insert fails rather than overwriting it.
 */
export async function insertRegisteredClient(db: AppDatabase, registration: Registration, now: number) {
  const inserted = await db.transaction(async (tx) => {
    const existing = await tx
      .select({ id: clients.clientId })
      .from(clients)
      .where(eq(clients.clientId, registration.client.clientId));
    if (existing.length > 0) return false;
    await writeRegistryRecords(tx, { clients: [registration.client] }, now);
    await markRegistered(tx, registration, now, now);
    return true;
  });
  if (!inserted) throw new Error('a generated client_id already exists');
}

/** RFC 7592 §2.2: replaces the client's metadata; its id, registration time and token stay. */
export async function replaceRegisteredClient(
  db: AppDatabase,
  registration: Registration,
  registeredAt: number,
  now: number,
) {
  await db.transaction(async (tx) => {
    await writeRegistryRecords(tx, { clients: [registration.client] }, now);
    await markRegistered(tx, registration, registeredAt, now);
  });
}

async function markRegistered(
  db: AppDatabase,
  registration: Registration,
  registeredAt: number,
  now: number,
) {
  await db
    .update(clients)
    .set({
      registeredAt,
      registrationAccessTokenHash: registration.registrationAccessTokenHash,
      registrationMetadata: registration.metadata,
      updatedAt: now,
    })
    .where(eq(clients.clientId, registration.client.clientId));
}

/** A registered client by id (enabled or not); `undefined` for a seed client or an unknown id. */
export async function findRegisteredClient(
  db: AppDatabase,
  clientId: string,
): Promise<RegisteredClientRow | undefined> {
  const [row] = await db
    .select({
      clientId: clients.clientId,
      registeredAt: clients.registeredAt,
      registrationAccessTokenHash: clients.registrationAccessTokenHash,
      registrationMetadata: clients.registrationMetadata,
      secretHash: clients.secretHash,
      disabledAt: clients.disabledAt,
    })
    .from(clients)
    .where(and(eq(clients.clientId, clientId), isNotNull(clients.registeredAt)));
  if (row === undefined || row.registeredAt === null) return undefined;
  return { ...row, registeredAt: row.registeredAt, registrationMetadata: row.registrationMetadata ?? {} };
}

/** Every registered client, oldest first (the `clients list` command). */
export async function listRegisteredClients(db: AppDatabase) {
  return db
    .select({
      clientId: clients.clientId,
      clientName: clients.clientName,
      registeredAt: clients.registeredAt,
      disabledAt: clients.disabledAt,
      registrationMetadata: clients.registrationMetadata,
    })
    .from(clients)
    .where(isNotNull(clients.registeredAt))
    .orderBy(clients.registeredAt, clients.clientId);
}

/** RFC 7592 §2.3 and `clients delete`: removes a registered client; false when there was none. */
export async function deleteRegisteredClient(db: AppDatabase, clientId: string): Promise<boolean> {
  const rows = await db
    .delete(clients)
    .where(and(eq(clients.clientId, clientId), isNotNull(clients.registeredAt)))
    .returning({ id: clients.clientId });
  return rows.length > 0;
}

/**
 * Deletes registered clients that registered before `registeredBefore` and never obtained a grant
 * (seed `unused_client_ttl_days`): registrations nobody used do not pile up. Returns their ids.
 */
export async function deleteUnusedRegisteredClients(
  db: AppDatabase,
  registeredBefore: number,
): Promise<string[]> {
  const rows = await db
    .delete(clients)
    .where(
      and(
        isNotNull(clients.registeredAt),
        lt(clients.registeredAt, registeredBefore),
        sql`not exists (select 1 from ${grants} where ${grants.clientId} = ${clients.clientId})`,
      ),
    )
    .returning({ id: clients.clientId });
  return rows.map((row) => row.id);
}
