import type { SessionRow } from '../../admin/console-queries.js';
import type { UserDetail, UserSearchPage } from '../../admin/users-admin.js';
import type { Translator } from '../../i18n/translator.js';
import { html } from '../html.js';
import { codeList, consoleWordsOf, details, renderConsolePage, table, when, wordFor } from './frame.js';
import { type ConsoleActionName, type ConsolePageContext, consoleRoot, sessionsTable } from './pages.js';

/** Users matching the search, a page at a time (keyset paging: a link to the next page and to the first). */
export function renderUsersPage(
  context: ConsolePageContext,
  search: { q: string; cursor: string },
  page: UserSearchPage,
) {
  const t = consoleWordsOf(context);
  const root = consoleRoot(context);
  const href = (cursor?: string) =>
    `${root}/users?${new URLSearchParams({ q: search.q, ...(cursor ? { cursor } : {}) }).toString()}`;
  const rows = page.users.map(
    (
      user,
    ) => html`<tr data-user="${user.sub}"><td><a href="${root}/users/${encodeURIComponent(user.sub)}">${user.username}</a></td>
<td>${user.name ?? t.text('console.time.dash')}</td><td>${user.email ?? t.text('console.time.dash')}</td><td>${wordFor(t, 'sources', user.source)}</td><td>${t.text(`console.status.${user.status}`)}</td></tr>`,
  );
  const paging =
    search.cursor === '' && page.next === null
      ? null
      : html`<nav class="pager" aria-label="${t.text('console.paging.label')}">
${search.cursor === '' ? null : html`<a href="${href()}">${t.text('console.paging.first')}</a>`}
${page.next === null ? null : html`<a href="${href(page.next)}" rel="next">${t.text('console.paging.next')}</a>`}
</nav>`;
  const body = html`<form method="get" action="${root}/users" class="console-search" role="search">
<div class="field"><label for="q">${t.text('console.users.search')}</label>
<input type="text" id="q" name="q" value="${search.q}" aria-describedby="q-hint" autocomplete="off">
<span id="q-hint" class="muted">${t.text('console.users.searchHint')}</span></div>
<button type="submit" class="primary">${t.text('console.users.searchButton')}</button></form>
${
  page.users.length === 0
    ? html`<p>${t.text('console.users.none')}</p>`
    : table(
        t.text('console.titles.users'),
        [
          t.text('console.users.username'),
          t.text('console.users.name'),
          t.text('console.users.email'),
          t.text('console.users.source'),
          t.text('console.users.status'),
        ],
        rows,
      )
}
${paging}`;
  return renderConsolePage({ ...context, title: t.text('console.titles.users'), section: 'users', body });
}

export interface UserPageInput {
  user: UserDetail;
  sessions: readonly SessionRow[];
  /** The actions that apply to this user now (disable or enable, …), in order. */
  actions: readonly ConsoleActionName[];
}

function factorList(t: Translator, factors: UserDetail['factors']['authenticatorApps']) {
  if (factors.length === 0) return html`0`;
  return html`<ul class="plain">${factors.map((factor) => html`<li>${factor.name} (${when(t, factor.createdAt)})</li>`)}</ul>`;
}

export function renderUserPage(context: ConsolePageContext, input: UserPageInput) {
  const t = consoleWordsOf(context);
  const { user } = input;
  const userUrl = `${consoleRoot(context)}/users/${encodeURIComponent(user.sub)}`;
  const email = user.email
    ? html`${user.email} (${user.emailVerified ? t.text('console.user.emailVerified') : t.text('console.user.emailUnverified')})`
    : t.text('console.time.dash');
  const groups = user.groups ?? [];
  const body = html`<section aria-labelledby="details-title"><h2 id="details-title">${t.text('console.user.details')}</h2>
${details([
  [t.text('console.user.sub'), html`<code>${user.sub}</code>`],
  [t.text('console.users.name'), user.name ?? t.text('console.time.dash')],
  [t.text('console.users.email'), email],
  [t.text('console.users.source'), wordFor(t, 'sources', user.source)],
  [t.text('console.users.status'), html`<span data-status>${t.text(`console.status.${user.status}`)}</span>`],
  [
    t.text('console.user.mfaRequired'),
    user.mfaRequired ? t.text('console.user.yes') : t.text('console.user.no'),
  ],
  [
    t.text('console.user.groups'),
    groups.length === 0 ? t.text('console.user.noGroups') : codeList(t, groups),
  ],
])}</section>
<section aria-labelledby="factors-title"><h2 id="factors-title">${t.text('console.user.factors')}</h2>
${details([
  [t.text('console.user.authenticatorApps'), factorList(t, user.factors.authenticatorApps)],
  [t.text('console.user.passkeys'), factorList(t, user.factors.passkeys)],
  [t.text('console.user.recoveryCodes'), user.factors.recoveryCodesRemaining],
])}</section>
<section aria-labelledby="sessions-title"><h2 id="sessions-title">${t.text('console.user.sessions')}</h2>
${input.sessions.length === 0 ? html`<p>${t.text('console.user.noSessions')}</p>` : sessionsTable(t.text('console.user.sessionsOf', { username: user.username }), input.sessions, context, false)}</section>
<section aria-labelledby="linked-title"><h2 id="linked-title">${t.text('console.user.linked')}</h2>
${
  user.linkedIdentities.length === 0
    ? html`<p>${t.text('console.user.noLinked')}</p>`
    : html`<ul>${user.linkedIdentities.map((link) => html`<li><code>${link.source}</code>: <code>${link.subject}</code> (${when(t, link.lastSignInAt)})</li>`)}</ul>`
}</section>
<section aria-labelledby="actions-title"><h2 id="actions-title">${t.text('console.user.actions')}</h2>
<ul class="console-actions">${input.actions.map(
    (action) =>
      html`<li><a class="button${action === 'enable' ? '' : ' secondary'}" data-action="${action}" href="${userUrl}/${action}">${t.text(`console.action.${action}.button`)}</a></li>`,
  )}</ul></section>`;
  return renderConsolePage({ ...context, title: user.username, section: 'users', body });
}
