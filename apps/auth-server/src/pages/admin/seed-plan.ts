import type { Translator } from '../../i18n/translator.js';
import type { SeedPlan } from '../../seed-plan/plan.js';
import { html, type SafeHtml } from '../html.js';
import { codeList, consoleWordsOf, renderConsolePage, table, wordFor } from './frame.js';
import { type ConsolePageContext, consoleRoot } from './pages.js';

/** What the console knows of the seed file: its plan, none (no seed), or why it cannot be read. */
export type SeedPlanView =
  | { kind: 'plan'; plan: SeedPlan }
  | { kind: 'no-seed' }
  | { kind: 'unreadable'; problem: string };

const hasChanges = (plan: SeedPlan) => plan.changes.length > 0 || plan.undoes.length > 0;

/** The overview's "Seed drift": a sentence and a link to the plan. */
export function renderSeedDrift(context: ConsolePageContext, view: SeedPlanView): SafeHtml {
  const t = consoleWordsOf(context);
  if (view.kind === 'no-seed')
    return html`<p class="muted">${t.text('console.overview.seedDriftUnknown')}</p>`;
  const link = html`<a href="${consoleRoot(context)}/seed-plan">${t.text('console.seedPlan.driftLink')}</a>`;
  if (view.kind === 'unreadable')
    return html`<p class="alert" data-seed-drift="unreadable">${t.text('console.seedPlan.unreadable')} ${link}</p>`;
  if (!hasChanges(view.plan))
    return html`<p data-seed-drift="none">${t.text('console.seedPlan.noChanges')}</p>`;
  return html`<p data-seed-drift="changes">${t.text('console.seedPlan.drift', { changes: view.plan.changes.length, undoes: view.plan.undoes.length })} ${link}</p>`;
}

function notes(
  t: Translator,
  title: string,
  rows: SeedPlan['undoes'] | SeedPlan['keeps'],
  reasons: 'undone' | 'kept',
) {
  if (rows.length === 0) return null;
  return html`<section><h2>${title}</h2><ul>${rows.map(
    (note) =>
      html`<li><code>${wordFor(t, 'seedPlan.kinds', note.kind)} ${note.id}</code>: ${wordFor(t, `seedPlan.${reasons}`, note.reason)}</li>`,
  )}</ul></section>`;
}

export function renderSeedPlanPage(context: ConsolePageContext, view: SeedPlanView) {
  const t = consoleWordsOf(context);
  let body: SafeHtml;
  if (view.kind === 'no-seed') body = html`<p>${t.text('console.seedPlan.noSeed')}</p>`;
  else if (view.kind === 'unreadable')
    body = html`<p class="alert" role="alert">${t.text('console.seedPlan.unreadable')} ${view.problem}</p>`;
  else {
    const { plan } = view;
    const rows = plan.changes.map(
      (change) =>
        html`<tr data-change="${change.action}"><td>${wordFor(t, 'seedPlan.kinds', change.kind)}</td><td><code>${change.id}</code></td><td>${wordFor(t, 'seedPlan.actions', change.action)}</td><td>${codeList(t, change.members)}</td></tr>`,
    );
    body = html`<p class="muted">${t.text('console.seedPlan.lead')}</p>
${plan.changes.length === 0 ? html`<p>${t.text('console.seedPlan.noChanges')}</p>` : table(t.text('console.seedPlan.changes'), [t.text('console.seedPlan.kind'), t.text('console.seedPlan.id'), t.text('console.seedPlan.action'), t.text('console.seedPlan.members')], rows)}
${notes(t, t.text('console.seedPlan.undoes'), plan.undoes, 'undone')}
${notes(t, t.text('console.seedPlan.keeps'), plan.keeps, 'kept')}`;
  }
  return renderConsolePage({
    ...context,
    title: t.text('console.titles.seedPlan'),
    section: 'seedPlan',
    body,
  });
}
