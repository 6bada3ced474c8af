import { type HtmlValue, html, type SafeHtml } from '../html.js';
import { renderPage } from '../layout.js';
import { CONSOLE_WORDS } from './words.js';

const W = CONSOLE_WORDS;

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

export interface ConsoleFrame {
  title: string;
  section: ConsoleSection;
  basePath: string;
  /** The signed-in operator's username. */
  operator: string;
  /** A confirmation or error after an action (post/redirect/get). */
  notice?: { kind: 'ok' | 'error'; text: string } | undefined;
  body: SafeHtml;
}

/** A console page: the shared document shell, the console's navigation, then the page. */
export function renderConsolePage(frame: ConsoleFrame): string {
  const root = `${frame.basePath}/admin`;
  const links = CONSOLE_SECTIONS.map(
    (section) =>
      html`<li><a href="${root}${section.path}"${section.key === frame.section ? html` aria-current="page"` : null}>${W.nav[section.key]}</a></li>`,
  );
  return renderPage({
    title: frame.title,
    basePath: frame.basePath,
    body: html`<div class="console">
<nav class="console-nav" aria-label="${W.nav.label}"><ul>${links}</ul></nav>
<p class="muted console-operator">${W.signedInAs(frame.operator)} \u00b7 <a href="${frame.basePath}/account">${W.account}</a></p>
${frame.notice ? html`<p class="${frame.notice.kind === 'ok' ? 'notice' : 'alert'}" role="status">${frame.notice.text}</p>` : null}
${frame.body}
</div>`,
  });
}

/** A time with its zone, machine-readable too ("2026-11-26 15:04 UTC"). */
export function when(seconds: number | null): SafeHtml {
  if (seconds === null) return html`${W.time.dash}`;
  const iso = new Date(seconds * 1000).toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').slice(0, 16)} ${W.time.utc}</time>`;
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
  paged: { page: number; total: number; pageSize: number },
  href: (page: number) => string,
) {
  const pages = Math.max(1, Math.ceil(paged.total / paged.pageSize));
  if (pages === 1) return null;
  return html`<nav class="pager" aria-label="${W.paging.label}">
${paged.page > 1 ? html`<a href="${href(paged.page - 1)}" rel="prev">${W.paging.previous}</a>` : null}
<span>${W.paging.position(paged.page, pages)}</span>
${paged.page < pages ? html`<a href="${href(paged.page + 1)}" rel="next">${W.paging.next}</a>` : null}
</nav>`;
}

/** A short list of strings as inline code, or a dash. */
export function codeList(values: readonly string[]): SafeHtml {
  if (values.length === 0) return html`${W.time.dash}`;
  return html`${values.map((value, index) => html`${index > 0 ? ', ' : ''}<code>${value}</code>`)}`;
}
