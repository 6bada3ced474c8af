import type { Overview, Paged, SessionRow } from '../../admin/console-queries.js';
import type { PageLanguage } from '../../i18n/translator.js';
import { html, type SafeHtml } from '../html.js';
import { renderPage } from '../layout.js';
import {
  age,
  codeList,
  consoleWordsOf,
  details,
  hourOf,
  pager,
  renderConsolePage,
  table,
  when,
} from './frame.js';

/** The operator's actions (src/routes/admin-console/actions.ts); each has `console.action.<name>.*` words. */
export type ConsoleActionName = 'disable' | 'enable' | 'reset-mfa' | 'send-reset' | 'end-sessions' | 'rotate';

/** What every console page carries besides its own content. */
export interface ConsolePageContext {
  basePath: string;
  operator: string;
  notice?: { kind: 'ok' | 'error'; text: string } | undefined;
  /** The request's language; English when absent. */
  language?: PageLanguage | undefined;
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
  const t = consoleWordsOf(context);
  const { overview } = input;
  const total = (key: 'signIns' | 'failures') => overview.perHour.reduce((sum, row) => sum + row[key], 0);
  const numbers: Array<readonly [string, string | number]> = [
    [t.text('console.overview.activeSessions'), overview.activeSessions],
    [t.text('console.overview.signIns'), total('signIns')],
    [t.text('console.overview.failures'), total('failures')],
    [t.text('console.overview.lockouts'), overview.lockouts],
    [
      t.text('console.overview.keyAge'),
      input.keyAgeSeconds === null ? t.text('console.overview.noKey') : age(t, input.keyAgeSeconds),
    ],
    [t.text('console.overview.users'), overview.users],
    [t.text('console.overview.disabledUsers'), overview.disabledUsers],
  ];
  const hours = overview.perHour.map(
    (row) =>
      html`<tr><td>${hourOf(row.hour)}</td><td data-sign-ins>${row.signIns}</td><td data-failures>${row.failures}</td></tr>`,
  );
  const body = html`<section aria-labelledby="summary-title"><h2 id="summary-title">${t.text('console.overview.summary')}</h2>
${details(numbers)}</section>
<section aria-labelledby="drift-title"><h2 id="drift-title">${t.text('console.overview.seedDrift')}</h2>
${input.seedDrift ?? html`<p class="muted">${t.text('console.overview.seedDriftUnknown')}</p>`}</section>
<section>${table(t.text('console.overview.signInsPerHour'), [t.text('console.overview.hourColumn'), t.text('console.overview.countColumn'), t.text('console.overview.failuresColumn')], hours)}</section>`;
  return renderConsolePage({
    ...context,
    title: t.text('console.titles.overview'),
    section: 'overview',
    body,
  });
}

export function sessionsTable(
  caption: string,
  rows: readonly SessionRow[],
  context: ConsolePageContext,
  withUser: boolean,
) {
  const t = consoleWordsOf(context);
  const headers = [
    ...(withUser ? [t.text('console.sessions.user')] : []),
    t.text('console.sessions.methods'),
    t.text('console.sessions.ip'),
    t.text('console.sessions.started'),
    t.text('console.sessions.lastUsed'),
    t.text('console.sessions.expires'),
  ];
  const cells = rows.map(
    (row) =>
      html`<tr data-session="${row.id}">${
        withUser
          ? html`<td><a href="${root(context)}/users/${encodeURIComponent(row.sub)}">${row.username ?? row.sub}</a></td>`
          : null
      }<td>${codeList(t, row.methods)}</td><td>${row.ip ?? t.text('console.sessions.unknown')}</td><td>${when(t, row.createdAt)}</td><td>${when(t, row.lastUsedAt)}</td><td>${when(t, row.expiresAt)}</td></tr>`,
  );
  return table(caption, headers, cells);
}

export function renderSessionsPage(context: ConsolePageContext, sessions: Paged<SessionRow>) {
  const t = consoleWordsOf(context);
  const body = html`${
    sessions.rows.length === 0
      ? html`<p>${t.text('console.sessions.none')}</p>`
      : sessionsTable(t.text('console.titles.sessions'), sessions.rows, context, true)
  }
${pager(t, sessions, (page) => `${root(context)}/sessions?page=${page}`)}`;
  return renderConsolePage({
    ...context,
    title: t.text('console.titles.sessions'),
    section: 'sessions',
    body,
  });
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
  const t = consoleWordsOf(context);
  const body = html`<p>${input.question}</p>
<form method="post" action="${input.action}" class="actions console-confirm">
<input type="hidden" name="csrf" value="${input.csrfToken}">
<a class="button secondary" href="${input.cancel}">${t.text('console.confirm.cancel')}</a>
<button type="submit" class="${input.danger ? 'danger' : 'primary'}" data-action="confirm">${input.confirmLabel}</button>
</form>`;
  return renderConsolePage({
    ...context,
    title: t.text('console.titles.confirm'),
    section: input.section,
    body,
  });
}

/** 403 for a signed-in person who is not an operator: no console navigation, a way to their account. */
export function renderForbiddenPage(basePath: string, language?: PageLanguage): string {
  const t = consoleWordsOf({ language });
  return renderPage({
    language,
    title: t.text('console.titles.forbidden'),
    basePath,
    body: html`<p>${t.text('console.forbidden.message')}</p>
<p class="muted">${t.text('console.forbidden.hint')}</p>
<p><a class="button" href="${basePath}/account">${t.text('console.forbidden.back')}</a></p>`,
  });
}

export function renderNotFoundPage(context: ConsolePageContext, section: 'users' | 'clients') {
  const t = consoleWordsOf(context);
  return renderConsolePage({
    ...context,
    title: t.text('console.titles.notFound'),
    section,
    body: html`<p>${t.text('console.notFound')}</p>`,
  });
}
