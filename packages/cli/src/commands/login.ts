import * as client from 'openid-client';
import qrcode from 'qrcode-terminal';
import { CliError, EXIT } from '../errors.js';
import { describeServerError, discover, sessionFromTokens } from '../oidc.js';
import { formatDuration, print, startSpinner } from '../terminal.js';
import { createTokenStore } from '../token-store.js';
import type { CommandContext } from './context.js';

export const DEFAULT_SCOPE = 'openid profile email offline_access orders.read';

export const LOGIN_HELP = `Usage: orders login [--scope <scopes>] [--no-qr]

Signs in with the device authorization grant (RFC 8628): prints a URL and a
code to enter in a browser on any device (a QR code too, on a terminal), then
waits until you approve or deny. The tokens are saved to
<config dir>/tokens.json, readable by you only (mode 0600).

Options:
  --scope <scopes>  scopes to ask for (default: "${DEFAULT_SCOPE}")
  --no-qr           do not draw the QR code
  -h, --help        show this help`;

export interface LoginOptions {
  scope: string;
  qr: boolean;
}

/** Extra seconds our own deadline waits past `expires_in`, so the server's `expired_token` comes first. */
const EXPIRY_GRACE_SECONDS = 30;

export async function login(context: CommandContext, options: LoginOptions): Promise<number> {
  const { settings, terminal } = context;
  const store = createTokenStore(settings.configDir);
  const configuration = await discover(settings);
  if (configuration.serverMetadata().device_authorization_endpoint === undefined) {
    throw new CliError(
      `${settings.issuerId} does not offer the device sign-in (no device_authorization_endpoint).`,
      EXIT.failure,
    );
  }

  let authorization: client.DeviceAuthorizationResponse;
  try {
    authorization = await client.initiateDeviceAuthorization(configuration, { scope: options.scope });
  } catch (error) {
    throw describeServerError(error, settings, 'the device sign-in');
  }

  const pageWithCode = authorization.verification_uri_complete;
  print(terminal, 'To sign in, open this page in a browser on any device:');
  print(terminal);
  print(terminal, `  ${authorization.verification_uri}`);
  print(terminal);
  print(terminal, 'and enter the code:');
  print(terminal);
  print(terminal, `  ${authorization.user_code}`);
  print(terminal);
  if (pageWithCode !== undefined) {
    print(terminal, `Or open ${pageWithCode} (the code is filled in).`);
    if (options.qr && terminal.stdout.isTTY) {
      qrcode.generate(pageWithCode, { small: true }, (drawing) => print(terminal, drawing.trimEnd()));
    }
    print(terminal);
  }

  const expiresAt = context.nowSeconds() + authorization.expires_in;
  const waiting = () =>
    `Waiting for approval in the browser (code expires in ${formatDuration(expiresAt - context.nowSeconds())})`;
  const spinner = startSpinner(terminal, waiting());
  const countdown = setInterval(() => spinner.update(waiting()), 1000);
  const deadline = AbortSignal.timeout((authorization.expires_in + EXPIRY_GRACE_SECONDS) * 1000);

  let tokens: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;
  try {
    // Polls at the server's interval; `slow_down` adds 5 s and `authorization_pending` waits (§3.5).
    tokens = await client.pollDeviceAuthorizationGrant(configuration, authorization, undefined, {
      signal: AbortSignal.any([context.signal, deadline]),
    });
  } catch (error) {
    throw describePollingFailure(error, context, deadline);
  } finally {
    clearInterval(countdown);
    spinner.stop();
  }

  const previous = await store.read().catch(() => null);
  const session = sessionFromTokens(tokens, settings, null, context.nowSeconds());
  await store.write(session);
  await revokeReplacedSession(context, configuration, previous);

  const who = session.name ?? session.sub;
  print(terminal, `Signed in as ${who}${session.email ? ` <${session.email}>` : ''}.`);
  print(terminal, `Tokens saved to ${store.file} (mode 0600).`);
  return EXIT.ok;
}

function describePollingFailure(error: unknown, context: CommandContext, deadline: AbortSignal): CliError {
  if (context.signal.aborted) return new CliError('Sign-in cancelled.', EXIT.interrupted);
  if (error instanceof client.ResponseBodyError) {
    // RFC 8628 §3.5.
    if (error.error === 'access_denied') {
      return new CliError('Sign-in was denied in the browser.', EXIT.authorization);
    }
    if (error.error === 'expired_token') {
      return new CliError(
        'The code expired before it was approved.',
        EXIT.authorization,
        'Run `orders login` again for a new code.',
      );
    }
  }
  if (deadline.aborted) {
    return new CliError(
      'The code expired before it was approved.',
      EXIT.authorization,
      'Run `orders login` again.',
    );
  }
  return describeServerError(error, context.settings, 'waiting for the approval');
}

/** A new login replaces the stored session: its refresh token is revoked (best effort, RFC 7009). */
async function revokeReplacedSession(
  context: CommandContext,
  configuration: client.Configuration,
  previous: Awaited<ReturnType<ReturnType<typeof createTokenStore>['read']>>,
) {
  if (previous === null || previous.refreshToken === null) return;
  if (previous.issuer !== context.settings.issuerId || previous.clientId !== context.settings.clientId)
    return;
  await client
    .tokenRevocation(configuration, previous.refreshToken, { token_type_hint: 'refresh_token' })
    .catch(() => {});
}
