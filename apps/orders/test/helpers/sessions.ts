import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../../src/config.js';
import { deriveKey, sha256Base64url } from '../../src/oidc/keys.js';
import { type SessionTokens, sealTokens } from '../../src/oidc/token-sealing.js';
import { SESSION_COOKIE } from '../../src/plugins/session.js';
import { insertSession } from '../../src/repositories/sessions.js';
import type { TestDatabase } from './database.js';

export interface TestSession {
  /** The `cookie` request header that presents this session. */
  cookie: string;
  /** The row id (SHA-256 of the cookie key). */
  id: string;
}

/**
 * Writes a session row as a completed sign-in would (tokens sealed under SESSION_SECRET), for route
 * tests that need a signed-in browser without running the sign-in itself.
 */
export async function insertTestSession(
  database: TestDatabase,
  config: AppConfig,
  session: {
    sub?: string;
    sid?: string | null;
    claims?: Record<string, unknown>;
    tokens?: SessionTokens;
    accessTokenExpiresAt?: Date | null;
    accessTokenRefreshAt?: Date | null;
    expiresAt?: Date;
  } = {},
): Promise<TestSession> {
  const key = randomBytes(32).toString('base64url');
  const id = sha256Base64url(key);
  const sub = session.sub ?? 'u-alice';
  await insertSession(database.handle.db, {
    id,
    sub,
    sid: session.sid === undefined ? 'sid-1' : session.sid,
    claims: session.claims ?? { sub, name: 'Alice Example', email: 'alice@example.com' },
    tokens: await sealTokens(session.tokens ?? {}, deriveKey(config.sessionSecret!, 'session tokens')),
    accessTokenExpiresAt: session.accessTokenExpiresAt ?? null,
    accessTokenRefreshAt: session.accessTokenRefreshAt ?? null,
    expiresAt: session.expiresAt ?? new Date(Date.now() + 3600_000),
  });
  return { cookie: `${SESSION_COOKIE}=${key}`, id };
}
