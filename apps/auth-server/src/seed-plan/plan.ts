import type { Client, Resource } from '@oidc-orders/oauth-core';

/**
 * `seed plan`: what applying a seed file would change, computed from what the file would write
 * (DesiredRegistry) and what the database holds (CurrentRegistry), with no I/O, so the same
 * function answers the CLI, the admin API and the tests. It mirrors src/seed.ts `applySeed`:
 * entries are upserted and enabled; clients, resources and providers the file no longer names are
 * disabled; users only when the seed manages them; a user entry is rewritten only when it changed
 * since it was last applied (its fingerprint); the seed re-enables only the users it disabled.
 */

export type SeedPlanKind = 'clients' | 'resources' | 'users' | 'identity_providers';

/** `add`: new; `change`: members differ; `enable`: disabled now, the file names it; `disable`: the file no longer names it. */
export type SeedPlanAction = 'add' | 'change' | 'enable' | 'disable';

export interface SeedPlanChange {
  kind: SeedPlanKind;
  id: string;
  action: SeedPlanAction;
  /** Seed file members whose value would change (for `change`, and for `enable` of a changed entry). */
  members: string[];
}

/**
 * What an operator (or the user) changed in the database that applying the file would undo:
 * - `operator_managed`: the operator took the user over (`users add`, or `users enable` of a user
 *   the file had dropped); the file names it, so it becomes the seed's again (a later removal from
 *   the file disables it).
 * - `password_replaced`: the entry changed and its password is not the one stored, so the stored
 *   one stops working. Whether the file changed it or the user (or `users reset-password`) did
 *   since cannot be told apart (only a keyed fingerprint of the last entry is kept), so it is
 *   always named: a reviewer sees whose password a merge resets.
 * - `factor_restored`: the entry changed and names a `totp_secret`, whose authenticator app was
 *   removed since (`users reset-mfa`, the account page): it comes back.
 * - `registration_adopted`: a client that registered itself (RFC 7591) is taken over by the file;
 *   its registration access token stops working.
 */
export type UndoneChangeReason =
  | 'operator_managed'
  | 'password_replaced'
  | 'factor_restored'
  | 'registration_adopted';

/** Operator changes the file leaves alone, listed so a reviewer knows they hold. */
export type KeptChangeReason = 'disabled_by_operator';

export interface SeedPlanNote<Reason extends string> {
  kind: SeedPlanKind;
  id: string;
  reason: Reason;
}

export interface SeedPlan {
  changes: SeedPlanChange[];
  undoes: SeedPlanNote<UndoneChangeReason>[];
  keeps: SeedPlanNote<KeptChangeReason>[];
}

// ─── Inputs ──────────────────────────────────────────────────────────────────────────────────────

/** A user entry as the file would write it (src/seed.ts `userRecord`, without the password hash). */
export interface DesiredUser {
  sub: string;
  /** Keyed fingerprint of the entry (src/accounts/drizzle/seed-users.ts). */
  fingerprint: string;
  /** Members compared with the stored row, by seed member name. */
  attributes: Record<string, unknown>;
  kerberosPrincipal: string | null;
  /** Normalised `totp_secret` (upper case, no spaces), or null. */
  totpSecret: string | null;
}

export interface DesiredProvider {
  id: string;
  issuer: string;
  client_id: string;
  display_name: string;
}

export interface DesiredRegistry {
  clients: Client[];
  resources: Resource[];
  users: DesiredUser[];
  providers: DesiredProvider[];
}

export interface CurrentUser {
  sub: string;
  attributes: Record<string, unknown>;
  disabled: boolean;
  disabledBy: 'seed' | 'operator' | null;
  managedBy: 'seed' | 'operator' | 'directory' | 'federation';
  seedFingerprint: string | null;
  kerberosPrincipal: string | null;
  /** Whether the file's password for this sub is the stored one (checked only for changed entries). */
  passwordMatchesFile: boolean;
  /**
   * The seeded authenticator app's secret: a string, null when there is none, or `undefined`
   * when it could not be read (no key-encryption key given): then only its presence is compared.
   */
  seededTotpSecret: string | null | undefined;
  hasSeededTotp: boolean;
}

export interface CurrentRegistry {
  clients: Array<{ client: Client; disabled: boolean; registered: boolean }>;
  resources: Array<{ resource: Resource; disabled: boolean }>;
  users: CurrentUser[];
  providers: Array<DesiredProvider & { disabled: boolean }>;
}

// ─── The plan ────────────────────────────────────────────────────────────────────────────────────

export function diffSeed(desired: DesiredRegistry, current: CurrentRegistry): SeedPlan {
  const plan: SeedPlan = { changes: [], undoes: [], keeps: [] };
  diffClients(plan, desired.clients, current.clients);
  diffSimple(
    plan,
    'resources',
    desired.resources.map((resource) => ({ id: resource.id, members: resourceMembers(resource) })),
    current.resources.map(({ resource, disabled }) => ({
      id: resource.id,
      members: resourceMembers(resource),
      disabled,
    })),
  );
  diffUsers(plan, desired.users, current.users);
  diffSimple(
    plan,
    'identity_providers',
    desired.providers.map(({ id, ...members }) => ({ id, members })),
    current.providers.map(({ id, disabled, ...members }) => ({ id, members, disabled })),
  );
  return plan;
}

/** Whether applying the file would change anything (the CLI's exit code 2). */
export function planHasChanges(plan: SeedPlan): boolean {
  return plan.changes.length > 0 || plan.undoes.length > 0;
}

interface Entry {
  id: string;
  members: Record<string, unknown>;
}

/** Resources and providers: upserted and enabled when named, disabled when not. */
function diffSimple(
  plan: SeedPlan,
  kind: SeedPlanKind,
  desired: readonly Entry[],
  current: ReadonlyArray<Entry & { disabled: boolean }>,
): void {
  const currentById = new Map(current.map((entry) => [entry.id, entry]));
  for (const entry of desired) {
    const existing = currentById.get(entry.id);
    const members = existing ? differingMembers(entry.members, existing.members) : [];
    const action = entryAction(existing, members);
    if (action) plan.changes.push({ kind, id: entry.id, action, members });
  }
  const named = new Set(desired.map((entry) => entry.id));
  for (const entry of current) {
    if (!named.has(entry.id) && !entry.disabled)
      plan.changes.push({ kind, id: entry.id, action: 'disable', members: [] });
  }
}

function entryAction(
  existing: { disabled: boolean } | undefined,
  members: readonly string[],
): SeedPlanAction | null {
  if (!existing) return 'add';
  if (existing.disabled) return 'enable';
  return members.length > 0 ? 'change' : null;
}

/** Clients as resources, except that the file leaves self-registered clients alone unless it names one. */
function diffClients(plan: SeedPlan, desired: readonly Client[], current: CurrentRegistry['clients']): void {
  const registered = new Set(
    current.filter((entry) => entry.registered).map((entry) => entry.client.clientId),
  );
  diffSimple(
    plan,
    'clients',
    desired.map((client) => ({ id: client.clientId, members: clientMembers(client) })),
    current
      // A self-registered client the file does not name is not the file's to disable.
      .filter(
        (entry) => !entry.registered || desired.some((client) => client.clientId === entry.client.clientId),
      )
      .map(({ client, disabled }) => ({ id: client.clientId, members: clientMembers(client), disabled })),
  );
  for (const client of desired) {
    if (registered.has(client.clientId))
      plan.undoes.push({ kind: 'clients', id: client.clientId, reason: 'registration_adopted' });
  }
}

function diffUsers(plan: SeedPlan, desired: readonly DesiredUser[], current: readonly CurrentUser[]): void {
  const currentBySub = new Map(current.map((user) => [user.sub, user]));
  for (const user of desired) {
    const existing = currentBySub.get(user.sub);
    if (!existing) {
      plan.changes.push({ kind: 'users', id: user.sub, action: 'add', members: [] });
      continue;
    }
    diffNamedUser(plan, user, existing);
  }
  const named = new Set(desired.map((user) => user.sub));
  for (const user of current) {
    // src/accounts/drizzle/user-ownership.ts `disableSeedUsersNotIn`: only enabled users the seed manages.
    if (!named.has(user.sub) && !user.disabled && user.managedBy === 'seed')
      plan.changes.push({ kind: 'users', id: user.sub, action: 'disable', members: [] });
  }
}

function diffNamedUser(plan: SeedPlan, user: DesiredUser, existing: CurrentUser): void {
  const note = (reason: UndoneChangeReason) => plan.undoes.push({ kind: 'users', id: user.sub, reason });
  const rewritten = existing.seedFingerprint !== user.fingerprint;
  const members = rewritten ? rewrittenUserMembers(user, existing) : [];
  // The principals table is rewritten at every start, whatever the fingerprint says.
  if (user.kerberosPrincipal !== existing.kerberosPrincipal) members.push('kerberos_principal');
  if (rewritten && !existing.passwordMatchesFile) note('password_replaced');
  if (rewritten && user.totpSecret !== null && !existing.hasSeededTotp) note('factor_restored');
  if (existing.managedBy === 'operator') note('operator_managed');

  // src/accounts/drizzle/user-ownership.ts `claimSeedUsers`: re-enables only the users the seed disabled.
  const reEnabled = existing.disabled && existing.disabledBy === 'seed';
  if (existing.disabled && !reEnabled)
    plan.keeps.push({ kind: 'users', id: user.sub, reason: 'disabled_by_operator' });
  const action: SeedPlanAction | null = reEnabled ? 'enable' : members.length > 0 ? 'change' : null;
  if (action) plan.changes.push({ kind: 'users', id: user.sub, action, members: members.sort() });
}

/** The members a rewrite of the entry changes (src/accounts/drizzle/account-joins.ts `upsertSeedUsers`). */
function rewrittenUserMembers(user: DesiredUser, existing: CurrentUser): string[] {
  const members = differingMembers(user.attributes, existing.attributes);
  if (!existing.passwordMatchesFile) members.push('password');
  if (totpDiffers(user.totpSecret, existing)) members.push('totp_secret');
  return members;
}

function totpDiffers(wanted: string | null, existing: CurrentUser): boolean {
  if (wanted === null) return existing.hasSeededTotp;
  if (!existing.hasSeededTotp) return true;
  return existing.seededTotpSecret !== undefined && existing.seededTotpSecret !== wanted;
}

// ─── Members ─────────────────────────────────────────────────────────────────────────────────────

/** Record fields whose seed member has another name than the snake_case of the field. */
const CLIENT_MEMBER_NAMES: Readonly<Record<string, string>> = {
  secretHash: 'client_secret',
  scopes: 'scope',
  authMethods: 'token_endpoint_auth_method',
};

function clientMembers(client: Client): Record<string, unknown> {
  const { clientId: _id, dynamicallyRegistered: _registered, ...rest } = client;
  return renameMembers(rest, CLIENT_MEMBER_NAMES);
}

function resourceMembers(resource: Resource): Record<string, unknown> {
  const { id: _id, ...rest } = resource;
  return renameMembers(rest, { secretHash: 'secret' });
}

function renameMembers(record: object, names: Readonly<Record<string, string>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(record).map(([key, value]) => [names[key] ?? snakeCase(key), value ?? null]),
  );
}

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** Members present in either whose values differ (arrays by order, as stored), sorted. */
export function differingMembers(wanted: Record<string, unknown>, stored: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(wanted), ...Object.keys(stored)]);
  return [...names]
    .filter((name) => canonicalJson(wanted[name] ?? null) !== canonicalJson(stored[name] ?? null))
    .sort();
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  const members = Object.entries(value)
    .filter(([, member]) => member !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${members.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
}
