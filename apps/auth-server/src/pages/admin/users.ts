import type { SessionRow } from '../../admin/console-queries.js';
import type { UserDetail, UserSearchPage } from '../../admin/users-admin.js';
import { html } from '../html.js';
import { codeList, details, renderConsolePage, table, when } from './frame.js';
import { type ConsolePageContext, consoleRoot, sessionsTable } from './pages.js';
import { ACTION_WORDS, CONSOLE_WORDS, type ConsoleActionName } from './words.js';

const W = CONSOLE_WORDS;
const sourceOf = (source: string) => W.sources[source] ?? source;

/** Users matching the search, a page at a time (keyset paging: a link to the next page and to the first). */
export function renderUsersPage(
  context: ConsolePageContext,
  search: { q: string; cursor: string },
  page: UserSearchPage,
) {
  const root = consoleRoot(context);
  const href = (cursor?: string) =>
    `${root}/users?${new URLSearchParams({ q: search.q, ...(cursor ? { cursor } : {}) }).toString()}`;
  const rows = page.users.map(
    (
      user,
    ) => html`<tr data-user="${user.sub}"><td><a href="${root}/users/${encodeURIComponent(user.sub)}">${user.username}</a></td>
<td>${user.name ?? W.time.dash}</td><td>${user.email ?? W.time.dash}</td><td>${sourceOf(user.source)}</td><td>${W.status[user.status]}</td></tr>`,
  );
  const paging =
    search.cursor === '' && page.next === null
      ? null
      : html`<nav class="pager" aria-label="${W.paging.label}">
${search.cursor === '' ? null : html`<a href="${href()}">${W.paging.first}</a>`}
${page.next === null ? null : html`<a href="${href(page.next)}" rel="next">${W.paging.next}</a>`}
</nav>`;
  const body = html`<form method="get" action="${root}/users" class="console-search" role="search">
<div class="field"><label for="q">${W.users.search}</label>
<input type="text" id="q" name="q" value="${search.q}" aria-describedby="q-hint" autocomplete="off">
<span id="q-hint" class="muted">${W.users.searchHint}</span></div>
<button type="submit" class="primary">${W.users.searchButton}</button></form>
${
  page.users.length === 0
    ? html`<p>${W.users.none}</p>`
    : table(
        W.titles.users,
        [W.users.username, W.users.name, W.users.email, W.users.source, W.users.status],
        rows,
      )
}
${paging}`;
  return renderConsolePage({ ...context, title: W.titles.users, section: 'users', body });
}

export interface UserPageInput {
  user: UserDetail;
  sessions: readonly SessionRow[];
  /** The actions that apply to this user now (disable or enable, …), in order. */
  actions: readonly ConsoleActionName[];
}

function factorList(factors: UserDetail['factors']['authenticatorApps']) {
  if (factors.length === 0) return html`0`;
  return html`<ul class="plain">${factors.map((factor) => html`<li>${factor.name} (${when(factor.createdAt)})</li>`)}</ul>`;
}

export function renderUserPage(context: ConsolePageContext, input: UserPageInput) {
  const { user } = input;
  const userUrl = `${consoleRoot(context)}/users/${encodeURIComponent(user.sub)}`;
  const email = user.email
    ? html`${user.email} (${user.emailVerified ? W.user.emailVerified : W.user.emailUnverified})`
    : W.time.dash;
  const groups = user.groups ?? [];
  const body = html`<section aria-labelledby="details-title"><h2 id="details-title">${W.user.details}</h2>
${details([
  [W.user.sub, html`<code>${user.sub}</code>`],
  [W.users.name, user.name ?? W.time.dash],
  [W.users.email, email],
  [W.users.source, sourceOf(user.source)],
  [W.users.status, html`<span data-status>${W.status[user.status]}</span>`],
  [W.user.mfaRequired, user.mfaRequired ? W.user.yes : W.user.no],
  [W.user.groups, groups.length === 0 ? W.user.noGroups : codeList(groups)],
])}</section>
<section aria-labelledby="factors-title"><h2 id="factors-title">${W.user.factors}</h2>
${details([
  [W.user.authenticatorApps, factorList(user.factors.authenticatorApps)],
  [W.user.passkeys, factorList(user.factors.passkeys)],
  [W.user.recoveryCodes, user.factors.recoveryCodesRemaining],
])}</section>
<section aria-labelledby="sessions-title"><h2 id="sessions-title">${W.user.sessions}</h2>
${input.sessions.length === 0 ? html`<p>${W.user.noSessions}</p>` : sessionsTable(W.user.sessionsOf(user.username), input.sessions, context, false)}</section>
<section aria-labelledby="linked-title"><h2 id="linked-title">${W.user.linked}</h2>
${
  user.linkedIdentities.length === 0
    ? html`<p>${W.user.noLinked}</p>`
    : html`<ul>${user.linkedIdentities.map((link) => html`<li><code>${link.source}</code>: <code>${link.subject}</code> (${when(link.lastSignInAt)})</li>`)}</ul>`
}</section>
<section aria-labelledby="actions-title"><h2 id="actions-title">${W.user.actions}</h2>
<ul class="console-actions">${input.actions.map(
    (action) =>
      html`<li><a class="button${action === 'enable' ? '' : ' secondary'}" data-action="${action}" href="${userUrl}/${action}">${ACTION_WORDS[action].button}</a></li>`,
  )}</ul></section>`;
  return renderConsolePage({ ...context, title: user.username, section: 'users', body });
}
