import type { SeedPlan } from '../../seed-plan/plan.js';
import { html, type SafeHtml } from '../html.js';
import { codeList, renderConsolePage, table } from './frame.js';
import { type ConsolePageContext, consoleRoot } from './pages.js';
import { CONSOLE_WORDS } from './words.js';

const W = CONSOLE_WORDS.seedPlan;

/** What the console knows of the seed file: its plan, none (no seed), or why it cannot be read. */
export type SeedPlanView =
  | { kind: 'plan'; plan: SeedPlan }
  | { kind: 'no-seed' }
  | { kind: 'unreadable'; problem: string };

const hasChanges = (plan: SeedPlan) => plan.changes.length > 0 || plan.undoes.length > 0;

/** The overview's "Seed drift": a sentence and a link to the plan. */
export function renderSeedDrift(context: ConsolePageContext, view: SeedPlanView): SafeHtml {
  if (view.kind === 'no-seed') return html`<p class="muted">${CONSOLE_WORDS.overview.seedDriftUnknown}</p>`;
  const link = html`<a href="${consoleRoot(context)}/seed-plan">${W.driftLink}</a>`;
  if (view.kind === 'unreadable')
    return html`<p class="alert" data-seed-drift="unreadable">${W.unreadable} ${link}</p>`;
  if (!hasChanges(view.plan)) return html`<p data-seed-drift="none">${W.noChanges}</p>`;
  return html`<p data-seed-drift="changes">${W.drift(view.plan.changes.length, view.plan.undoes.length)} ${link}</p>`;
}

function notes(title: string, rows: SeedPlan['undoes'] | SeedPlan['keeps'], words: Record<string, string>) {
  if (rows.length === 0) return null;
  return html`<section><h2>${title}</h2><ul>${rows.map(
    (note) =>
      html`<li><code>${W.kinds[note.kind] ?? note.kind} ${note.id}</code>: ${words[note.reason] ?? note.reason}</li>`,
  )}</ul></section>`;
}

export function renderSeedPlanPage(context: ConsolePageContext, view: SeedPlanView) {
  let body: SafeHtml;
  if (view.kind === 'no-seed') body = html`<p>${W.noSeed}</p>`;
  else if (view.kind === 'unreadable')
    body = html`<p class="alert" role="alert">${W.unreadable} ${view.problem}</p>`;
  else {
    const { plan } = view;
    const rows = plan.changes.map(
      (change) =>
        html`<tr data-change="${change.action}"><td>${W.kinds[change.kind] ?? change.kind}</td><td><code>${change.id}</code></td><td>${W.actions[change.action] ?? change.action}</td><td>${codeList(change.members)}</td></tr>`,
    );
    body = html`<p class="muted">${W.lead}</p>
${plan.changes.length === 0 ? html`<p>${W.noChanges}</p>` : table(W.changes, [W.kind, W.id, W.action, W.members], rows)}
${notes(W.undoes, plan.undoes, W.undone)}
${notes(W.keeps, plan.keeps, W.kept)}`;
  }
  return renderConsolePage({ ...context, title: CONSOLE_WORDS.titles.seedPlan, section: 'seedPlan', body });
}
