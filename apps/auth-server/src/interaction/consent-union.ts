import { sql } from 'drizzle-orm';
import { consents } from '../db/schema.js';

/**
 * What the user approved for a client is the union of their approvals: an approval is an
 * `INSERT … ON CONFLICT` with this clause, in one statement, so two approvals racing on different
 * instances both end up in it. An approval of scopes already remembered (prompt=consent asks every
 * time) updates nothing: no new row version, no WAL. The consent page's Allow runs it inside the
 * statement that consumes the interaction (`InteractionRepository.consume`); the account page
 * forgets a client's consent (src/account/app-access.ts).
 */
export const consentUnion = {
  target: [consents.sub, consents.clientId],
  set: {
    scopes: sql`array(select distinct unnest(${consents.scopes} || excluded.scopes) order by 1)`,
    updatedAt: sql`excluded.updated_at`,
  },
  setWhere: sql`not (${consents.scopes} @> excluded.scopes)`,
};
