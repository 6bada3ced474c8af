import type { ProtocolStores } from '@oidc-orders/oauth-core';
import type { PageContext } from '../authorization-reply.js';

/**
 * The login and consent pages' URL. It names the client (public information: it is in the
 * authorization request already) so that the page can still offer a way back to that client once
 * the interaction itself is gone, e.g. when the user presses Back after signing in.
 */
export function interactionPageUrl(
  pageContext: PageContext,
  interactionId: string,
  page: string,
  clientId: string | undefined,
): string {
  const path = `${pageContext.basePath}/interaction/${interactionId}/${page}`;
  return clientId ? `${path}?${new URLSearchParams({ client_id: clientId })}` : path;
}

export function clientIdFromQuery(query: unknown): string | undefined {
  const value = (query as Record<string, unknown> | null | undefined)?.client_id;
  return typeof value === 'string' && value.length > 0 && value.length <= 256 ? value : undefined;
}

/**
 * The registered home of a client: the origin of its first web redirect URI. Only registered
 * values are ever linked (never a URL taken from the request), so this is no open redirect.
 */
export async function clientHomeLink(
  stores: Pick<ProtocolStores, 'clients'>,
  clientId: string | undefined,
): Promise<{ href: string; label: string } | undefined> {
  if (clientId === undefined) return undefined;
  const client = await stores.clients.findClient(clientId);
  const webRedirect = client?.redirectUris.find((uri) => /^https?:\/\//.test(uri));
  if (!client || webRedirect === undefined) return undefined;
  return { href: `${new URL(webRedirect).origin}/`, label: `Back to ${client.clientName}` };
}
