import { eq } from 'drizzle-orm';
import type { AppDatabase } from '../db/client.js';
import { kerberosPrincipals } from '../db/schema.js';

/** Seed user member `kerberos_principal`: which user (`sub`) a client principal signs in. */
export interface KerberosPrincipalEntry {
  principal: string;
  sub: string;
}

/**
 * Makes the table hold exactly `entries` (the seed file is the truth: a principal the file no
 * longer names stops signing anyone in), in one transaction.
 */
export async function replaceKerberosPrincipals(
  db: AppDatabase,
  entries: readonly KerberosPrincipalEntry[],
  now: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.delete(kerberosPrincipals);
    if (entries.length > 0) {
      await tx.insert(kerberosPrincipals).values(entries.map((entry) => ({ ...entry, updatedAt: now })));
    }
  });
}

/** The `sub` registered for `principal` (exact, case-sensitive, realm included), or `null`. */
export async function findSubByKerberosPrincipal(db: AppDatabase, principal: string): Promise<string | null> {
  const [row] = await db
    .select({ sub: kerberosPrincipals.sub })
    .from(kerberosPrincipals)
    .where(eq(kerberosPrincipals.principal, principal))
    .limit(1);
  return row?.sub ?? null;
}
