import {
  type KeptChangeReason,
  planHasChanges,
  type SeedPlan,
  type SeedPlanAction,
  type SeedPlanKind,
  type UndoneChangeReason,
} from './plan.js';

/** `seed plan`'s text output: one line per change, grouped by kind, as a pull request shows it. */

const KINDS: readonly SeedPlanKind[] = ['clients', 'resources', 'users', 'identity_providers'];

const ACTION_MARKS: Record<SeedPlanAction, string> = { add: '+', change: '~', enable: '↑', disable: '-' };

const ACTION_WORDS: Record<SeedPlanAction, string> = {
  add: 'added',
  change: 'changed',
  enable: 'enabled again',
  disable: 'disabled (the file no longer names it)',
};

export const UNDONE_DESCRIPTIONS: Record<UndoneChangeReason, string> = {
  operator_managed: 'an operator took this user over (users add / users enable); the file takes it back',
  password_replaced:
    'the stored password stops working: the file gives another (a password the user or users reset-password set since is lost)',
  factor_restored: 'the authenticator app removed since (users reset-mfa, the account page) comes back',
  registration_adopted:
    'a self-registered client becomes the file’s; its registration access token stops working',
};

export const KEPT_DESCRIPTIONS: Record<KeptChangeReason, string> = {
  disabled_by_operator: 'disabled by an operator: stays disabled',
};

export function formatSeedPlan(plan: SeedPlan, source: string): string {
  if (!planHasChanges(plan)) {
    return [`seed plan for ${source}: no changes`, ...keptLines(plan)].join('\n');
  }
  const lines = [`seed plan for ${source}:`];
  for (const kind of KINDS) {
    const changes = plan.changes.filter((change) => change.kind === kind);
    if (changes.length === 0) continue;
    lines.push(`${kind}:`);
    for (const change of changes) {
      const members = change.members.length > 0 ? `: ${change.members.join(', ')}` : '';
      lines.push(`  ${ACTION_MARKS[change.action]} ${change.id}  ${ACTION_WORDS[change.action]}${members}`);
    }
  }
  if (plan.undoes.length > 0) {
    lines.push('operator changes this file would undo:');
    for (const note of plan.undoes)
      lines.push(`  ! ${note.kind} ${note.id}: ${UNDONE_DESCRIPTIONS[note.reason]}`);
  }
  lines.push(...keptLines(plan));
  lines.push(`${plan.changes.length} change(s), ${plan.undoes.length} operator change(s) undone`);
  return lines.join('\n');
}

function keptLines(plan: SeedPlan): string[] {
  if (plan.keeps.length === 0) return [];
  return [
    'operator changes the file leaves alone:',
    ...plan.keeps.map((note) => `  = ${note.kind} ${note.id}: ${KEPT_DESCRIPTIONS[note.reason]}`),
  ];
}
