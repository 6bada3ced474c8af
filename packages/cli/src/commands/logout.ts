import * as client from 'openid-client';
import { CliError, EXIT } from '../errors.js';
import { describeServerError, discover } from '../oidc.js';
import { issuerIdOf } from '../settings.js';
import { print } from '../terminal.js';
import { createTokenStore } from '../token-store.js';
import type { CommandContext } from './context.js';

export const LOGOUT_HELP = `Usage: orders logout

Revokes the stored refresh token at the authorization server (RFC 7009; this
ends the whole sign-in, access tokens included) and deletes the token file.
The file is deleted even when the server cannot be reached (exit code 3 then:
the refresh token stays valid until it expires).

Options:
  -h, --help  show this help`;

export async function logout(context: CommandContext): Promise<number> {
  const { terminal } = context;
  const store = createTokenStore(context.settings.configDir);
  const session = await store.read().catch((error: unknown) => {
    // A damaged file is still deleted: that is what logout is for.
    if (error instanceof CliError) return null;
    throw error;
  });
  if (session === null) {
    const removed = await store.remove();
    print(terminal, removed ? `Deleted ${store.file}.` : 'Not signed in; nothing to do.');
    return EXIT.ok;
  }

  // Revoke where the session came from, whatever --issuer says now.
  const issuer = new URL(session.issuer);
  const settings = { ...context.settings, issuer, issuerId: issuerIdOf(issuer), clientId: session.clientId };
  let failure: CliError | null = null;
  try {
    const configuration = await discover(settings);
    // RFC 7009 §2.1: revoking the refresh token; this server then revokes the grant's access tokens too.
    const token = session.refreshToken ?? session.accessToken;
    await client.tokenRevocation(configuration, token, {
      token_type_hint: session.refreshToken ? 'refresh_token' : 'access_token',
    });
  } catch (error) {
    failure = describeServerError(error, settings, 'revoking the session');
  }
  await store.remove();
  if (failure !== null) {
    throw new CliError(
      `${failure.message} The local tokens were deleted, but the server could not revoke them.`,
      failure.exitCode,
      failure.hint,
    );
  }
  print(
    terminal,
    `Signed out of ${session.issuer}: the refresh token was revoked and ${store.file} deleted.`,
  );
  return EXIT.ok;
}
