import type { Overview, Paged, SessionRow } from '../../admin/console-queries.js';
import { html, type SafeHtml } from '../html.js';
import { renderPage } from '../layout.js';
import { codeList, details, hourOf, pager, renderConsolePage, table, when } from './frame.js';
import { CONSOLE_WORDS } from './words.js';

const W = CONSOLE_WORDS;

/** What every console page carries besides its own content. */
export interface ConsolePageContext {
  basePath: string;
  operator: string;
  notice?: { kind: 'ok' | 'error'; text: string } | undefined;
}

export const consoleRoot = (context: ConsolePageContext) => `${context.basePath}/admin`;
const root = consoleRoot;

/** The overview's inputs: the aggregates, the age of the signing key in use, the seed drift. */
export interface OverviewInput {
  overview: Overview;
  /** Seconds since the signing key in use was made; null when none signs yet. */
  keyAgeSeconds: number | null;
  seedDrift: SafeHtml | null;
}

export function renderOverviewPage(context: ConsolePageContext, input: OverviewInput) {
  const { overview } = input;
  const total = (key: 'signIns' | 'failures') => overview.perHour.reduce((sum, row) => sum + row[key], 0);
  const numbers: Array<readonly [string, string | number]> = [
    [W.overview.activeSessions, overview.activeSessions],
    [W.overview.signIns, total('signIns')],
    [W.overview.failures, total('failures')],
    [W.overview.lockouts, overview.lockouts],
    [W.overview.keyAge, input.keyAgeSeconds === null ? W.overview.noKey : W.time.age(input.keyAgeSeconds)],
    [W.overview.users, overview.users],
    [W.overview.disabledUsers, overview.disabledUsers],
  ];
  const hours = overview.perHour.map(
    (row) =>
      html`<tr><td>${hourOf(row.hour)}</td><td data-sign-ins>${row.signIns}</td><td data-failures>${row.failures}</td></tr>`,
  );
  const body = html`<section aria-labelledby="summary-title"><h2 id="summary-title">${W.overview.summary}</h2>
${details(numbers)}</section>
<section aria-labelledby="drift-title"><h2 id="drift-title">${W.overview.seedDrift}</h2>
${input.seedDrift ?? html`<p class="muted">${W.overview.seedDriftUnknown}</p>`}</section>
<section>${table(W.overview.signInsPerHour, [W.overview.hourColumn, W.overview.countColumn, W.overview.failuresColumn], hours)}</section>`;
  return renderConsolePage({ ...context, title: W.titles.overview, section: 'overview', body });
}

export function sessionsTable(
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
<button type="submit" class="${input.danger ? 'danger' : 'primary'}" data-action="confirm">${input.confirmLabel}</button>
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
