import { CliError, EXIT, isNetworkError, unreachable } from '../errors.js';
import { discover, freshSession, requireSession } from '../oidc.js';
import { formatTable, print } from '../terminal.js';
import { createTokenStore } from '../token-store.js';
import type { CommandContext } from './context.js';

export const LIST_HELP = `Usage: orders list [--json]

Lists your orders: GET <api url>/orders with your access token. An expired
access token is refreshed first (the refresh token rotates and is saved), and
once more if the API answers 401.

Options:
  --json      print the orders as JSON
  -h, --help  show this help`;

/** One order as `GET /orders` returns it (apps/orders README). */
interface OwnOrder {
  id: number;
  quantity: number;
  total: string;
  status: string;
  createdAt: string;
}

const REQUEST_TIMEOUT_MS = 15_000;

export async function list(context: CommandContext, options: { json: boolean }): Promise<number> {
  const { settings, terminal } = context;
  const store = createTokenStore(settings.configDir);
  await requireSession(store, settings);
  const configuration = await discover(settings);
  const sessionContext = { settings, store, configuration, nowSeconds: context.nowSeconds };
  const url = new URL(
    'orders',
    settings.apiUrl.href.endsWith('/') ? settings.apiUrl : `${settings.apiUrl.href}/`,
  );

  let session = await freshSession(sessionContext);
  let response = await getOrders(url, session.accessToken, context.signal);
  if (response.status === 401) {
    // RFC 6750 §3.1: the token was revoked or expired early. Refresh once and try again.
    await response.body?.cancel();
    session = await freshSession(sessionContext, { force: true });
    response = await getOrders(url, session.accessToken, context.signal);
  }
  if (!response.ok) throw await describeApiFailure(response, url);

  const orders = (await response.json()) as OwnOrder[];
  if (options.json) {
    print(terminal, JSON.stringify(orders, null, 2));
    return EXIT.ok;
  }
  if (orders.length === 0) {
    print(terminal, 'No orders yet.');
    return EXIT.ok;
  }
  print(
    terminal,
    formatTable(
      ['ID', 'QTY', 'TOTAL', 'STATUS', 'CREATED'],
      orders.map((order) => [
        String(order.id),
        String(order.quantity),
        order.total,
        order.status,
        order.createdAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
      ]),
    ),
  );
  print(terminal, `${orders.length} order${orders.length === 1 ? '' : 's'}.`);
  return EXIT.ok;
}

async function getOrders(url: URL, accessToken: string, signal: AbortSignal): Promise<Response> {
  try {
    return await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
  } catch (error) {
    if (signal.aborted) throw new CliError('Cancelled.', EXIT.interrupted);
    if (isNetworkError(error)) throw unreachable('orders API', url.href);
    throw error;
  }
}

async function describeApiFailure(response: Response, url: URL): Promise<CliError> {
  const body = (await response.json().catch(() => null)) as { message?: unknown } | null;
  const message = typeof body?.message === 'string' ? `: ${body.message}` : '';
  if (response.status >= 502 && response.status <= 504) return unreachable('orders API', url.href);
  if (response.status === 401) {
    return new CliError(
      `The orders API did not accept your access token${message}.`,
      EXIT.authorization,
      'Run `orders login` again; if it persists, check that --api-url and --issuer belong together.',
    );
  }
  if (response.status === 403) {
    return new CliError(
      `The orders API refused the request${message}.`,
      EXIT.authorization,
      'Your session may lack the orders.read scope: run `orders login`.',
    );
  }
  return new CliError(`The orders API answered ${response.status}${message}.`, EXIT.failure);
}
