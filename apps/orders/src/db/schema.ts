import { relations, sql } from 'drizzle-orm';
import { check, index, integer, jsonb, numeric, pgTable, serial, text, timestamp } from 'drizzle-orm/pg-core';

export const orderStatuses = ['created'] as const;
export type OrderStatus = (typeof orderStatuses)[number];

export const users = pgTable('users', {
  id: serial('id').primaryKey(),
  // Stored lower-cased by the repositories so that find-or-create by e-mail is case-insensitive.
  email: text('email').notNull().unique('users_email_unique'),
});

export const orders = pgTable(
  'orders',
  {
    id: serial('id').primaryKey(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id),
    quantity: integer('quantity').notNull(),
    // numeric, not float: money is read back as an exact decimal string.
    total: numeric('total', { precision: 12, scale: 2 }).notNull(),
    // A text column rather than a Postgres enum: adding a status later is a plain code change.
    status: text('status').$type<OrderStatus>().notNull().default('created'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (table) => [
    index('orders_user_id_idx').on(table.userId),
    // The API validates both already; the constraints keep any other writer honest too.
    check('orders_quantity_positive', sql`${table.quantity} >= 1`),
    check('orders_total_not_negative', sql`${table.total} >= 0`),
  ],
);

/**
 * Server-side sign-in sessions. The browser's cookie holds only a random key; `id` is its SHA-256,
 * so a copy of this table cannot be replayed as cookies. Every instance reads the same rows.
 */
export const sessions = pgTable(
  'sessions',
  {
    /** base64url SHA-256 of the cookie key. */
    id: text('id').primaryKey(),
    /** The ID token's `sub`, exactly as issued. */
    sub: text('sub').notNull(),
    /** The provider's session id (ID token `sid`), matched by back-channel logout. */
    sid: text('sid'),
    /** User claims of the ID token (plus UserInfo when configured), protocol claims left out. */
    claims: jsonb('claims').$type<Record<string, unknown>>().notNull(),
    /**
     * The tokens as one JWE (dir, A256GCM) under a key derived from SESSION_SECRET: the ID token
     * always (logout's `id_token_hint`), access and refresh tokens only with OIDC_SAVE_TOKENS.
     */
    tokens: text('tokens').notNull(),
    /** Absent without a saved access token. */
    accessTokenExpiresAt: timestamp('access_token_expires_at', { withTimezone: true, mode: 'date' }),
    /** When the access token is due for refresh (before it expires). */
    accessTokenRefreshAt: timestamp('access_token_refresh_at', { withTimezone: true, mode: 'date' }),
    /** Cross-instance single-flight refresh: who holds the lease, and until when. */
    refreshLease: text('refresh_lease'),
    refreshLeaseExpiresAt: timestamp('refresh_lease_expires_at', { withTimezone: true, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    /** Absolute end of the session (SESSION_TTL_SECONDS), whatever the tokens' lifetimes. */
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [
    index('sessions_sid_idx').on(table.sid),
    index('sessions_sub_idx').on(table.sub),
    index('sessions_expires_at_idx').on(table.expiresAt),
  ],
);

export const usersRelations = relations(users, ({ many }) => ({
  orders: many(orders),
}));

export const ordersRelations = relations(orders, ({ one }) => ({
  user: one(users, { fields: [orders.userId], references: [users.id] }),
}));

/**
 * RFC 9449 §11.1: `jti`s of DPoP proofs already accepted at this API, shared by every instance so a
 * captured proof cannot be replayed at another one. `key` is a hash of the key thumbprint and the
 * `jti` (fixed size, scoped by key); rows past `expires_at` are deleted by a periodic sweep.
 */
export const dpopProofJtis = pgTable(
  'dpop_proof_jtis',
  {
    key: text('key').primaryKey(),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (table) => [index('dpop_proof_jtis_expires_at_idx').on(table.expiresAt)],
);
