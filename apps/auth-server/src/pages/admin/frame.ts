import { en, type MessageKey } from '../../i18n/catalogues/en.js';
import { ENGLISH_PAGE, type PageLanguage, type Translator } from '../../i18n/translator.js';
import { type HtmlValue, html, type SafeHtml } from '../html.js';
import { renderPage } from '../layout.js';

/** The sections of the console, in the order of its navigation. */
export const CONSOLE_SECTIONS = [
  { key: 'overview', path: '' },
  { key: 'users', path: '/users' },
  { key: 'sessions', path: '/sessions' },
  { key: 'clients', path: '/clients' },
  { key: 'audit', path: '/audit' },
  { key: 'keys', path: '/keys' },
  { key: 'seedPlan', path: '/seed-plan' },
] as const;

export type ConsoleSection = (typeof CONSOLE_SECTIONS)[number]['key'];

/** The words of a console page: the request's language, English when none is given. */
export const consoleWordsOf = (frame: { language?: PageLanguage | undefined }): Translator =>
  (frame.language ?? ENGLISH_PAGE).t;

/**
 * The word for one value of an open set (a user's source, a seed-plan kind, an event's outcome):
 * the catalogue's `console.<group>.<value>`, else the value itself, so a new value still shows.
 */
export function wordFor(t: Translator, group: string, value: string): string {
  const key = `console.${group}.${value}`;
  return Object.hasOwn(en, key) ? t.text(key as MessageKey) : value;
}

/** An age in whole days, else hours, else minutes ("3 days"), pluralised in the language. */
export function age(t: Translator, seconds: number): string {
  if (seconds >= 86_400) return t.text('console.time.days', { count: Math.floor(seconds / 86_400) });
  if (seconds >= 3600) return t.text('console.time.hours', { count: Math.floor(seconds / 3600) });
  return t.text('console.time.minutes', { count: Math.floor(seconds / 60) });
}

export interface ConsoleFrame {
  title: string;
  section: ConsoleSection;
  basePath: string;
  /** The signed-in operator's username. */
  operator: string;
  /** A confirmation or error after an action (post/redirect/get). */
  notice?: { kind: 'ok' | 'error'; text: string } | undefined;
  body: SafeHtml;
  /** The request's language; English when absent. */
  language?: PageLanguage | undefined;
}

/** A console page: the shared document shell, the console's navigation, then the page. */
export function renderConsolePage(frame: ConsoleFrame): string {
  const t = consoleWordsOf(frame);
  const root = `${frame.basePath}/admin`;
  const links = CONSOLE_SECTIONS.map(
    (section) =>
      html`<li><a href="${root}${section.path}"${section.key === frame.section ? html` aria-current="page"` : null}>${t.text(`console.nav.${section.key}`)}</a></li>`,
  );
  return renderPage({
    title: frame.title,
    basePath: frame.basePath,
    language: frame.language,
    body: html`<div class="console">
<nav class="console-nav" aria-label="${t.text('console.nav.label')}"><ul>${links}</ul></nav>
<p class="muted console-operator">${t.text('console.signedInAs', { username: frame.operator })} \u00b7 <a href="${frame.basePath}/account">${t.text('console.account')}</a></p>
${frame.notice ? html`<p class="${frame.notice.kind === 'ok' ? 'notice' : 'alert'}" role="status">${frame.notice.text}</p>` : null}
${frame.body}
</div>`,
  });
}

/** A time with its zone, machine-readable too ("2026-11-26 15:04 UTC"). */
export function when(t: Translator, seconds: number | null): SafeHtml {
  if (seconds === null) return html`${t.text('console.time.dash')}`;
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} ${t.text('console.time.utc')}</time>`;
}

/** The hour a row counts, as its UTC clock time ("06:00"): the overview lists only the last 12 hours. */
export function hourOf(seconds: number): SafeHtml {
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.slice(11, 16)}</time>`;
}

/**
 * A table that scrolls sideways inside its own focusable region on a narrow screen (375 px),
 * instead of widening the page (WCAG 1.4.10 reflow; axe `scrollable-region-focusable`).
 */
export function table(caption: string, headers: readonly string[], rows: readonly HtmlValue[]): SafeHtml {
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
<table><caption>${caption}</caption>
<thead><tr>${headers.map((header) => html`<th scope="col">${header}</th>`)}</tr></thead>
<tbody>${rows}</tbody></table></div>`;
}

/** Definition list of label → value pairs (a user's or a client's details). */
export function details(pairs: ReadonlyArray<readonly [string, HtmlValue]>): SafeHtml {
  return html`<dl class="console-details">${pairs.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>`;
}

/** Previous / next links of a paged list; `href(page)` keeps the list's query. */
export function pager(
  t: Translator,
  paged: { page: number; total: number; pageSize: number },
  href: (page: number) => string,
) {
  const pages = Math.max(1, Math.ceil(paged.total / paged.pageSize));
  if (pages === 1) return null;
  return html`<nav class="pager" aria-label="${t.text('console.paging.label')}">
${paged.page > 1 ? html`<a href="${href(paged.page - 1)}" rel="prev">${t.text('console.paging.previous')}</a>` : null}
<span>${t.text('console.paging.position', { page: paged.page, pages })}</span>
${paged.page < pages ? html`<a href="${href(paged.page + 1)}" rel="next">${t.text('console.paging.next')}</a>` : null}
</nav>`;
}

/** A short list of strings as inline code, or a dash. */
export function codeList(t: Translator, values: readonly string[]): SafeHtml {
  if (values.length === 0) return html`${t.text('console.time.dash')}`;
  return html`${values.map((value, index) => html`${index > 0 ? ', ' : ''}<code>${value}</code>`)}`;
}
