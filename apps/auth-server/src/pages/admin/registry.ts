import type { SigningKeyStatus } from '../../admin/keys-admin.js';
import type { ClientOverview } from '../../admin/registry-admin.js';
import { html } from '../html.js';
import { codeList, details, renderConsolePage, table, when } from './frame.js';
import { type ConsolePageContext, consoleRoot } from './pages.js';
import { ACTION_WORDS, CONSOLE_WORDS } from './words.js';

const W = CONSOLE_WORDS;
const sourceOf = (source: string) => W.sources[source] ?? source;
const lastUse = (seconds: number | null) => (seconds === null ? W.clients.never : when(seconds));

/** The clients, read-only: the seed file (or the client's own registration) owns them. */
export function renderClientsPage(context: ConsolePageContext, clients: readonly ClientOverview[]) {
  const root = consoleRoot(context);
  const rows = clients.map(
    (
      client,
    ) => html`<tr data-client="${client.clientId}"><td><a href="${root}/clients/${encodeURIComponent(client.clientId)}"><code>${client.clientId}</code></a></td>
<td>${client.clientName}</td><td>${sourceOf(client.source)}</td><td>${W.status[client.status]}</td><td>${client.activeGrants}</td><td>${lastUse(client.lastUsedAt)}</td></tr>`,
  );
  const headers = [
    W.clients.clientId,
    W.clients.name,
    W.clients.source,
    W.clients.status,
    W.clients.activeGrants,
    W.clients.lastUsed,
  ];
  const body = html`<p class="muted">${W.clients.readOnly}</p>
${clients.length === 0 ? html`<p>${W.clients.none}</p>` : table(W.titles.clients, headers, rows)}`;
  return renderConsolePage({ ...context, title: W.titles.clients, section: 'clients', body });
}

export function renderClientPage(context: ConsolePageContext, client: ClientOverview) {
  const body = html`<p class="muted">${W.clients.readOnly}</p>
${details([
  [W.clients.clientId, html`<code>${client.clientId}</code>`],
  [W.clients.name, client.clientName],
  [W.clients.source, sourceOf(client.source)],
  [W.clients.status, W.status[client.status]],
  [W.clients.activeGrants, client.activeGrants],
  [W.clients.lastUsed, lastUse(client.lastUsedAt)],
  [W.clients.grantTypes, codeList(client.grantTypes)],
  [W.clients.scopes, codeList(client.scopes)],
  [W.clients.redirectUris, codeList(client.redirectUris)],
  [
    W.clients.backchannelLogout,
    client.backchannelLogoutUri ? html`<code>${client.backchannelLogoutUri}</code>` : W.time.dash,
  ],
  [W.clients.authMethods, codeList(client.authMethods)],
])}
<p><a href="${consoleRoot(context)}/clients">${W.clients.back}</a></p>`;
  return renderConsolePage({ ...context, title: client.clientName, section: 'clients', body });
}

export function renderKeysPage(context: ConsolePageContext, keys: readonly SigningKeyStatus[]) {
  const rows = keys.map(
    (
      key,
    ) => html`<tr data-kid="${key.kid}"><td><code>${key.kid}</code></td><td>${key.alg}</td><td>${W.keys.statuses[key.state]}</td>
<td>${when(key.activatesAt)}</td><td>${when(key.retiresAt)}</td><td>${when(key.removeAfter)}</td></tr>`,
  );
  const headers = [
    W.keys.kid,
    W.keys.alg,
    W.keys.status,
    W.keys.activates,
    W.keys.retires,
    W.keys.removeAfter,
  ];
  const body = html`${keys.length === 0 ? html`<p>${W.keys.none}</p>` : table(W.titles.keys, headers, rows)}
<p><a class="button" data-action="rotate" href="${consoleRoot(context)}/keys/rotate">${ACTION_WORDS.rotate.button}</a></p>`;
  return renderConsolePage({ ...context, title: W.titles.keys, section: 'keys', body });
}
