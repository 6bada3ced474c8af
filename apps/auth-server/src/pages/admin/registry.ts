import type { SigningKeyStatus } from '../../admin/keys-admin.js';
import type { ClientOverview } from '../../admin/registry-admin.js';
import type { Translator } from '../../i18n/translator.js';
import { html } from '../html.js';
import { codeList, consoleWordsOf, details, renderConsolePage, table, when, wordFor } from './frame.js';
import { type ConsolePageContext, consoleRoot } from './pages.js';

const lastUse = (t: Translator, seconds: number | null) =>
  seconds === null ? t.text('console.clients.never') : when(t, seconds);

/** The clients, read-only: the seed file (or the client's own registration) owns them. */
export function renderClientsPage(context: ConsolePageContext, clients: readonly ClientOverview[]) {
  const t = consoleWordsOf(context);
  const root = consoleRoot(context);
  const rows = clients.map(
    (
      client,
    ) => html`<tr data-client="${client.clientId}"><td><a href="${root}/clients/${encodeURIComponent(client.clientId)}"><code>${client.clientId}</code></a></td>
<td>${client.clientName}</td><td>${wordFor(t, 'sources', client.source)}</td><td>${t.text(`console.status.${client.status}`)}</td><td>${client.activeGrants}</td><td>${lastUse(t, client.lastUsedAt)}</td></tr>`,
  );
  const headers = [
    t.text('console.clients.clientId'),
    t.text('console.clients.name'),
    t.text('console.clients.source'),
    t.text('console.clients.status'),
    t.text('console.clients.activeGrants'),
    t.text('console.clients.lastUsed'),
  ];
  const body = html`<p class="muted">${t.text('console.clients.readOnly')}</p>
${clients.length === 0 ? html`<p>${t.text('console.clients.none')}</p>` : table(t.text('console.titles.clients'), headers, rows)}`;
  return renderConsolePage({ ...context, title: t.text('console.titles.clients'), section: 'clients', body });
}

export function renderClientPage(context: ConsolePageContext, client: ClientOverview) {
  const t = consoleWordsOf(context);
  const body = html`<p class="muted">${t.text('console.clients.readOnly')}</p>
${details([
  [t.text('console.clients.clientId'), html`<code>${client.clientId}</code>`],
  [t.text('console.clients.name'), client.clientName],
  [t.text('console.clients.source'), wordFor(t, 'sources', client.source)],
  [t.text('console.clients.status'), t.text(`console.status.${client.status}`)],
  [t.text('console.clients.activeGrants'), client.activeGrants],
  [t.text('console.clients.lastUsed'), lastUse(t, client.lastUsedAt)],
  [t.text('console.clients.grantTypes'), codeList(t, client.grantTypes)],
  [t.text('console.clients.scopes'), codeList(t, client.scopes)],
  [t.text('console.clients.redirectUris'), codeList(t, client.redirectUris)],
  [
    t.text('console.clients.backchannelLogout'),
    client.backchannelLogoutUri
      ? html`<code>${client.backchannelLogoutUri}</code>`
      : t.text('console.time.dash'),
  ],
  [t.text('console.clients.authMethods'), codeList(t, client.authMethods)],
])}
<p><a href="${consoleRoot(context)}/clients">${t.text('console.clients.back')}</a></p>`;
  return renderConsolePage({ ...context, title: client.clientName, section: 'clients', body });
}

export function renderKeysPage(context: ConsolePageContext, keys: readonly SigningKeyStatus[]) {
  const t = consoleWordsOf(context);
  const rows = keys.map(
    (
      key,
    ) => html`<tr data-kid="${key.kid}"><td><code>${key.kid}</code></td><td>${key.alg}</td><td>${t.text(`console.keys.statuses.${key.state}`)}</td>
<td>${when(t, key.activatesAt)}</td><td>${when(t, key.retiresAt)}</td><td>${when(t, key.removeAfter)}</td></tr>`,
  );
  const headers = [
    t.text('console.keys.kid'),
    t.text('console.keys.alg'),
    t.text('console.keys.status'),
    t.text('console.keys.activates'),
    t.text('console.keys.retires'),
    t.text('console.keys.removeAfter'),
  ];
  const body = html`${keys.length === 0 ? html`<p>${t.text('console.keys.none')}</p>` : table(t.text('console.titles.keys'), headers, rows)}
<p><a class="button" data-action="rotate" href="${consoleRoot(context)}/keys/rotate">${t.text('console.action.rotate.button')}</a></p>`;
  return renderConsolePage({ ...context, title: t.text('console.titles.keys'), section: 'keys', body });
}
