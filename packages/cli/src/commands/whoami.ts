import * as client from 'openid-client';
import { EXIT } from '../errors.js';
import { describeServerError, discover, freshSession, requireSession } from '../oidc.js';
import { formatTable, print } from '../terminal.js';
import { createTokenStore } from '../token-store.js';
import type { CommandContext } from './context.js';

export const WHOAMI_HELP = `Usage: orders whoami [--json]

Shows who you are signed in as, from the authorization server's UserInfo
endpoint (refreshing the access token first when it has expired).

Options:
  --json      print the UserInfo claims as JSON
  -h, --help  show this help`;

export async function whoami(context: CommandContext, options: { json: boolean }): Promise<number> {
  const { settings, terminal } = context;
  const store = createTokenStore(settings.configDir);
  // Before any network: "not signed in" needs no server.
  await requireSession(store, settings);
  const configuration = await discover(settings);
  const sessionContext = { settings, store, configuration, nowSeconds: context.nowSeconds };

  let session = await freshSession(sessionContext);
  let userInfo: client.UserInfoResponse;
  try {
    userInfo = await client.fetchUserInfo(configuration, session.accessToken, session.sub);
  } catch (error) {
    // RFC 6750 §3.1 invalid_token: revoked or expired early; one refresh, then one more try.
    if (!(error instanceof client.WWWAuthenticateChallengeError)) {
      throw describeServerError(error, settings, 'reading UserInfo');
    }
    session = await freshSession(sessionContext, { force: true });
    try {
      userInfo = await client.fetchUserInfo(configuration, session.accessToken, session.sub);
    } catch (retryError) {
      throw describeServerError(retryError, settings, 'reading UserInfo');
    }
  }

  if (options.json) {
    print(terminal, JSON.stringify(userInfo, null, 2));
    return EXIT.ok;
  }
  const name = typeof userInfo.name === 'string' ? userInfo.name : userInfo.sub;
  const email = typeof userInfo.email === 'string' ? ` <${userInfo.email}>` : '';
  print(terminal, `Signed in to ${settings.issuerId} as ${name}${email}`);
  print(terminal);
  print(
    terminal,
    formatTable(
      ['', ''],
      [
        ['subject', userInfo.sub],
        ['client', settings.clientId],
        ['scopes', session.scope],
        ['access token', `valid until ${new Date(session.accessTokenExpiresAt * 1000).toISOString()}`],
        [
          'refresh',
          session.refreshToken ? 'automatic (refresh token stored)' : 'none: sign in again when it expires',
        ],
      ],
    )
      .split('\n')
      .slice(1)
      .map((line) => `  ${line}`)
      .join('\n'),
  );
  return EXIT.ok;
}
