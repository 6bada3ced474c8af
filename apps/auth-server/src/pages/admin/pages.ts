import type {
  ClientDetail,
  ClientRow,
  KeyRow,
  Overview,
  Paged,
  SessionRow,
  UserDetail,
  UserRow,
} from '../../admin/console-queries.js';
import { html, type SafeHtml } from '../html.js';
import { renderPage } from '../layout.js';
import { codeList, details, pager, renderConsolePage, table, when } from './frame.js';
import { ACTION_WORDS, CONSOLE_WORDS, type ConsoleActionName } from './words.js';

const W = CONSOLE_WORDS;

/** What every console page carries besides its own content. */
export interface ConsolePageContext {
  basePath: string;
  operator: string;
  notice?: { kind: 'ok' | 'error'; text: string } | undefined;
}

const root = (context: ConsolePageContext) => `${context.basePath}/admin`;
const sourceOf = (source: string) => W.sources[source] ?? source;
const statusOf = (disabled: boolean) => (disabled ? W.status.disabled : W.status.enabled);

export function renderOverviewPage(
  context: ConsolePageContext,
  overview: Overview,
  seedDrift: SafeHtml | null,
) {
  const numbers: Array<readonly [string, string | number]> = [
    [W.overview.activeSessions, overview.activeSessions],
    [W.overview.failures, overview.failures],
    [W.overview.lockouts, overview.lockouts],
    [
      W.overview.keyAge,
      overview.keyAgeSeconds === null ? W.overview.noKey : W.time.age(overview.keyAgeSeconds),
    ],
    [W.overview.users, overview.users],
    [W.overview.disabledUsers, overview.disabledUsers],
  ];
  const hours = overview.signInsPerHour.map(
    (row) => html`<tr><td>${when(row.hour)}</td><td data-count>${row.count}</td></tr>`,
  );
  const body = html`<section aria-labelledby="summary-title"><h2 id="summary-title">${W.overview.summary}</h2>
${details(numbers)}</section>
<section aria-labelledby="drift-title"><h2 id="drift-title">${W.overview.seedDrift}</h2>
${seedDrift ?? html`<p class="muted">${W.overview.seedDriftUnknown}</p>`}</section>
<section>${table(W.overview.signInsPerHour, [W.overview.hourColumn, W.overview.countColumn], hours)}</section>`;
  return renderConsolePage({ ...context, title: W.titles.overview, section: 'overview', body });
}

export function renderUsersPage(context: ConsolePageContext, query: string, users: Paged<UserRow>) {
  const href = (page: number) =>
    `${root(context)}/users?${new URLSearchParams({ q: query, page: String(page) }).toString()}`;
  const rows = users.rows.map(
    (
      user,
    ) => html`<tr data-user="${user.sub}"><td><a href="${root(context)}/users/${encodeURIComponent(user.sub)}">${user.username}</a></td>
<td>${user.name ?? W.time.dash}</td><td>${user.email ?? W.time.dash}</td><td>${sourceOf(user.source)}</td><td>${statusOf(user.disabled)}</td></tr>`,
  );
  const body = html`<form method="get" action="${root(context)}/users" class="console-search" role="search">
<div class="field"><label for="q">${W.users.search}</label>
<input type="text" id="q" name="q" value="${query}" aria-describedby="q-hint" autocomplete="off">
<span id="q-hint" class="muted">${W.users.searchHint}</span></div>
<button type="submit">${W.users.searchButton}</button></form>
<p class="muted">${W.users.count(users.total)}</p>
${
  users.rows.length === 0
    ? html`<p>${W.users.none}</p>`
    : table(
        W.titles.users,
        [W.users.username, W.users.name, W.users.email, W.users.source, W.users.status],
        rows,
      )
}
${pager(users, href)}`;
  return renderConsolePage({ ...context, title: W.titles.users, section: 'users', body });
}

export interface UserPageInput {
  user: UserDetail;
  factors: { authenticatorApps: number; passkeys: number; recoveryCodes: number };
  sessions: Paged<SessionRow>;
  linked: ReadonlyArray<{ displayName: string; subject: string; lastSignInAt: number | null }>;
  /** The actions that apply to this user now (disable or enable, …), in order. */
  actions: readonly ConsoleActionName[];
}

export function renderUserPage(context: ConsolePageContext, input: UserPageInput) {
  const { user, factors } = input;
  const userUrl = `${root(context)}/users/${encodeURIComponent(user.sub)}`;
  const email = user.email
    ? html`${user.email} (${user.emailVerified ? W.user.emailVerified : W.user.emailUnverified})`
    : W.time.dash;
  const body = html`<section aria-labelledby="details-title"><h2 id="details-title">${W.user.details}</h2>
${details([
  [W.user.sub, html`<code>${user.sub}</code>`],
  [W.users.name, user.name ?? W.time.dash],
  [W.users.email, email],
  [W.users.source, sourceOf(user.source)],
  [W.users.status, html`<span data-status>${statusOf(user.disabled)}</span>`],
  [W.user.mfaRequired, user.mfaRequired ? W.user.yes : W.user.no],
  [W.user.groups, user.groups.length === 0 ? W.user.noGroups : codeList(user.groups)],
])}</section>
<section aria-labelledby="factors-title"><h2 id="factors-title">${W.user.factors}</h2>
${details([
  [W.user.authenticatorApps, factors.authenticatorApps],
  [W.user.passkeys, factors.passkeys],
  [W.user.recoveryCodes, factors.recoveryCodes],
])}</section>
<section aria-labelledby="sessions-title"><h2 id="sessions-title">${W.user.sessions}</h2>
${input.sessions.rows.length === 0 ? html`<p>${W.user.noSessions}</p>` : sessionsTable(W.user.sessionsOf(user.username), input.sessions.rows, context, false)}</section>
<section aria-labelledby="linked-title"><h2 id="linked-title">${W.user.linked}</h2>
${
  input.linked.length === 0
    ? html`<p>${W.user.noLinked}</p>`
    : html`<ul>${input.linked.map((link) => html`<li>${link.displayName}: <code>${link.subject}</code> (${when(link.lastSignInAt)})</li>`)}</ul>`
}</section>
<section aria-labelledby="actions-title"><h2 id="actions-title">${W.user.actions}</h2>
<ul class="console-actions">${input.actions.map(
    (action) =>
      html`<li><a class="button${action === 'enable' ? '' : ' secondary'}" data-action="${action}" href="${userUrl}/${action}">${ACTION_WORDS[action].button}</a></li>`,
  )}</ul></section>`;
  return renderConsolePage({ ...context, title: user.username, section: 'users', body });
}

function sessionsTable(
  caption: string,
  rows: readonly SessionRow[],
  context: ConsolePageContext,
  withUser: boolean,
) {
  const headers = [
    ...(withUser ? [W.sessions.user] : []),
    W.sessions.methods,
    W.sessions.ip,
    W.sessions.started,
    W.sessions.lastUsed,
    W.sessions.expires,
  ];
  const cells = rows.map(
    (row) =>
      html`<tr data-session="${row.id}">${
        withUser
          ? html`<td><a href="${root(context)}/users/${encodeURIComponent(row.sub)}">${row.username ?? row.sub}</a></td>`
          : null
      }<td>${codeList(row.methods)}</td><td>${row.ip ?? W.sessions.unknown}</td><td>${when(row.createdAt)}</td><td>${when(row.lastUsedAt)}</td><td>${when(row.expiresAt)}</td></tr>`,
  );
  return table(caption, headers, cells);
}

export function renderSessionsPage(context: ConsolePageContext, sessions: Paged<SessionRow>) {
  const body = html`${
    sessions.rows.length === 0
      ? html`<p>${W.sessions.none}</p>`
      : sessionsTable(W.titles.sessions, sessions.rows, context, true)
  }
${pager(sessions, (page) => `${root(context)}/sessions?page=${page}`)}`;
  return renderConsolePage({ ...context, title: W.titles.sessions, section: 'sessions', body });
}

export function renderClientsPage(context: ConsolePageContext, clients: readonly ClientRow[]) {
  const rows = clients.map(
    (
      client,
    ) => html`<tr data-client="${client.clientId}"><td><a href="${root(context)}/clients/${encodeURIComponent(client.clientId)}"><code>${client.clientId}</code></a></td>
<td>${client.clientName}</td><td>${sourceOf(client.source)}</td><td>${statusOf(client.disabled)}</td><td>${client.activeGrants}</td><td>${client.lastUsedAt === null ? W.clients.never : when(client.lastUsedAt)}</td></tr>`,
  );
  const body = html`<p class="muted">${W.clients.readOnly}</p>
${
  clients.length === 0
    ? html`<p>${W.clients.none}</p>`
    : table(
        W.titles.clients,
        [
          W.clients.clientId,
          W.clients.name,
          W.clients.source,
          W.clients.status,
          W.clients.activeGrants,
          W.clients.lastUsed,
        ],
        rows,
      )
}`;
  return renderConsolePage({ ...context, title: W.titles.clients, section: 'clients', body });
}

export function renderClientPage(context: ConsolePageContext, client: ClientDetail) {
  const yesNo = (value: boolean) => (value ? W.user.yes : W.user.no);
  const body = html`<p class="muted">${W.clients.readOnly}</p>
${details([
  [W.clients.clientId, html`<code>${client.clientId}</code>`],
  [W.clients.source, sourceOf(client.source)],
  [W.clients.status, statusOf(client.disabled)],
  [W.clients.activeGrants, client.activeGrants],
  [W.clients.lastUsed, client.lastUsedAt === null ? W.clients.never : when(client.lastUsedAt)],
  [W.clients.grantTypes, codeList(client.grantTypes)],
  [W.clients.scopes, codeList(client.scopes)],
  [W.clients.redirectUris, codeList(client.redirectUris)],
  [W.clients.postLogoutRedirectUris, codeList(client.postLogoutRedirectUris)],
  [
    W.clients.backchannelLogout,
    client.backchannelLogoutUri ? html`<code>${client.backchannelLogoutUri}</code>` : W.time.dash,
  ],
  [W.clients.authMethods, codeList(client.authMethods)],
  [W.clients.skipConsent, yesNo(client.skipConsent)],
  [W.clients.requireMfa, yesNo(client.requireMfa)],
])}
<p><a href="${root(context)}/clients">${W.clients.back}</a></p>`;
  return renderConsolePage({ ...context, title: client.clientName, section: 'clients', body });
}

export function renderKeysPage(context: ConsolePageContext, keys: readonly KeyRow[]) {
  const rows = keys.map(
    (
      key,
    ) => html`<tr data-kid="${key.kid}"><td><code>${key.kid}</code></td><td>${key.alg}</td><td>${W.keys.statuses[key.status]}</td>
<td>${when(key.activatesAt)}</td><td>${when(key.retiresAt)}</td><td>${when(key.removeAfter)}</td></tr>`,
  );
  const body = html`${
    keys.length === 0
      ? html`<p>${W.keys.none}</p>`
      : table(
          W.titles.keys,
          [W.keys.kid, W.keys.alg, W.keys.status, W.keys.activates, W.keys.retires, W.keys.removeAfter],
          rows,
        )
  }
<p><a class="button" data-action="rotate" href="${root(context)}/keys/rotate">${ACTION_WORDS.rotate.button}</a></p>`;
  return renderConsolePage({ ...context, title: W.titles.keys, section: 'keys', body });
}

/** A page that has nothing to show yet on this server (audit log, seed plan without their stores). */
export function renderUnavailablePage(
  context: ConsolePageContext,
  section: 'audit' | 'seedPlan',
  message: string,
) {
  return renderConsolePage({ ...context, title: W.titles[section], section, body: html`<p>${message}</p>` });
}

export interface ConfirmPageInput {
  section: 'users' | 'keys';
  question: string;
  confirmLabel: string;
  /** Where the form posts (the action's own URL) and where Cancel leads. */
  action: string;
  cancel: string;
  csrfToken: string;
  danger: boolean;
}

/** The confirm step of every action: the question, the one button that acts, and a way back. */
export function renderConfirmPage(context: ConsolePageContext, input: ConfirmPageInput) {
  const body = html`<p>${input.question}</p>
<form method="post" action="${input.action}" class="actions console-confirm">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<a class="button secondary" href="${input.cancel}">${W.confirm.cancel}</a>
<button type="submit"${input.danger ? html` class="danger"` : null} data-action="confirm">${input.confirmLabel}</button>
</form>`;
  return renderConsolePage({ ...context, title: W.titles.confirm, section: input.section, body });
}

/** 403 for a signed-in person who is not an operator: no console navigation, a way to their account. */
export function renderForbiddenPage(basePath: string): string {
  return renderPage({
    title: W.titles.forbidden,
    basePath,
    body: html`<p>${W.forbidden.message}</p>
<p class="muted">${W.forbidden.hint}</p>
<p><a class="button" href="${basePath}/account">${W.forbidden.back}</a></p>`,
  });
}

export function renderNotFoundPage(context: ConsolePageContext, section: 'users' | 'clients') {
  return renderConsolePage({
    ...context,
    title: W.titles.notFound,
    section,
    body: html`<p>${W.notFound}</p>`,
  });
}
