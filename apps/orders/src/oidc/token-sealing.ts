import { CompactEncrypt, compactDecrypt } from 'jose';

/** The tokens a session keeps. The ID token always (logout's `id_token_hint`); the others with OIDC_SAVE_TOKENS. */
export interface SessionTokens {
  idToken?: string;
  accessToken?: string;
  refreshToken?: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Tokens are stored encrypted (JWE, dir + A256GCM, key derived from SESSION_SECRET): a copy of the
 * sessions table, a backup or a log of SQL parameters does not hand out refresh tokens.
 */
export async function sealTokens(tokens: SessionTokens, key: Uint8Array): Promise<string> {
  return new CompactEncrypt(encoder.encode(JSON.stringify(tokens)))
    .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
    .encrypt(key);
}

/** Throws when the value was sealed under another SESSION_SECRET or altered. */
export async function unsealTokens(sealed: string, key: Uint8Array): Promise<SessionTokens> {
  const { plaintext } = await compactDecrypt(sealed, key, {
    keyManagementAlgorithms: ['dir'],
    contentEncryptionAlgorithms: ['A256GCM'],
  });
  const parsed = JSON.parse(decoder.decode(plaintext)) as Record<string, unknown>;
  const tokens: SessionTokens = {};
  for (const name of ['idToken', 'accessToken', 'refreshToken'] as const) {
    if (typeof parsed[name] === 'string') tokens[name] = parsed[name];
  }
  return tokens;
}
