import { hashPassword } from '@oidc-orders/oauth-core';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { setUserDisabledByOperator } from '../src/accounts/drizzle/user-ownership.js';
import { users } from '../src/db/schema.js';
import type { SeedDocument, SeedUser } from '../src/schemas/seed.js';
import { applySeed, parseSeedDocument } from '../src/seed.js';
import { formatSeedPlan } from '../src/seed-plan/format.js';
import { planHasChanges } from '../src/seed-plan/plan.js';
import { planSeed, seedPlanContext } from '../src/seed-plan/plan-seed.js';
import { testConfig } from './helpers/app.js';
import { createTestDatabase, type TestDatabase } from './helpers/database.js';
import { ORDERS_API, TEST_PASSWORD_COST, testSeed } from './helpers/seed.js';

/**
 * `seed plan` (src/seed-plan/): against a database the seed was applied to, the plan of a changed
 * file lists each change, and names the operator changes applying it would undo, or keep.
 */

const config = testConfig();
const context = seedPlanContext(config);
const NOW = 1_800_000_000;
const opened: TestDatabase[] = [];

afterEach(async () => {
  for (const database of opened.splice(0)) await database.drop();
});

const CAROL: SeedUser = {
  sub: 'u-carol',
  username: 'carol',
  password: 'carol-password-for-tests',
  name: 'Carol',
};
const DAVE: SeedUser = { sub: 'u-dave', username: 'dave', password: 'dave-password-for-tests' };

/** The test seed with two more users and an upstream provider. */
function baseSeed(): SeedDocument {
  const seed = testSeed();
  return parseSeedDocument({
    ...seed,
    users: [...(seed.users ?? []), CAROL, DAVE],
    identity_providers: [
      {
        id: 'corp',
        issuer: 'https://idp.example.test',
        client_id: 'auth-server',
        client_secret: 'corp-secret-for-tests-0123456789',
        scope: 'openid email',
        display_name: 'Corp',
      },
    ],
  });
}

async function applied(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  opened.push(database);
  await apply(database, baseSeed());
  return database;
}

async function apply(database: TestDatabase, seed: SeedDocument): Promise<void> {
  await applySeed(database.handle.db, seed, {
    ...context,
    now: NOW,
    passwordCost: TEST_PASSWORD_COST,
  });
}

function withUsers(seed: SeedDocument, change: (users: SeedUser[]) => SeedUser[]): SeedDocument {
  return { ...seed, users: change([...(seed.users ?? [])]) };
}

describe('seed plan', () => {
  it('has nothing to do for the file that was applied', async () => {
    const database = await applied();
    const plan = await planSeed(database.handle.db, baseSeed(), context);
    expect(plan).toEqual({ changes: [], undoes: [], keeps: [] });
    expect(planHasChanges(plan)).toBe(false);
    expect(formatSeedPlan(plan, 'seed.json')).toBe('seed plan for seed.json: no changes');
  });

  it('lists each client, resource, user and provider the changed file adds, changes or disables', async () => {
    const database = await applied();
    const base = baseSeed();
    const changed = parseSeedDocument({
      ...base,
      clients: [
        ...(base.clients ?? [])
          .filter((client) => client.client_id !== 'service')
          .map((client) =>
            client.client_id === 'spa'
              ? { ...client, redirect_uris: ['https://spa.example.test/new-callback'] }
              : client,
          ),
        {
          client_id: 'reports-cli',
          client_secret: 'reports-cli-secret-for-tests-012345',
          grant_types: ['client_credentials'],
          scope: 'reports.read',
        },
      ],
      resources: (base.resources ?? []).map((resource) =>
        resource.id === ORDERS_API ? { ...resource, access_token_ttl: 120 } : resource,
      ),
      users: [
        ...(base.users ?? [])
          .filter((user) => user.sub !== DAVE.sub)
          .map((user) =>
            user.sub === CAROL.sub ? { ...user, name: 'Carol Jones', password: 'carol-new-password' } : user,
          ),
        { sub: 'u-frank', username: 'frank', password: 'frank-password-for-tests' },
      ],
      identity_providers: [{ ...base.identity_providers?.[0], display_name: 'Corp SSO' }],
    });

    const plan = await planSeed(database.handle.db, changed, context);

    expect(plan.changes).toHaveLength(8);
    expect(plan.changes).toEqual(
      expect.arrayContaining([
        { kind: 'clients', id: 'reports-cli', action: 'add', members: [] },
        { kind: 'clients', id: 'spa', action: 'change', members: ['redirect_uris'] },
        { kind: 'clients', id: 'service', action: 'disable', members: [] },
        { kind: 'resources', id: ORDERS_API, action: 'change', members: ['access_token_ttl'] },
        { kind: 'users', id: 'u-carol', action: 'change', members: ['name', 'password'] },
        { kind: 'users', id: 'u-frank', action: 'add', members: [] },
        { kind: 'users', id: DAVE.sub, action: 'disable', members: [] },
        { kind: 'identity_providers', id: 'corp', action: 'change', members: ['display_name'] },
      ]),
    );
    // Whoever set the stored password (here the file itself), it stops working: always named.
    expect(plan.undoes).toEqual([{ kind: 'users', id: 'u-carol', reason: 'password_replaced' }]);
    const text = formatSeedPlan(plan, 'seed.json');
    expect(text).toContain('~ spa  changed: redirect_uris');
    expect(text).toContain('- service  disabled');
    expect(text).not.toContain('secret-for-tests');
    expect(JSON.stringify(plan)).not.toMatch(/secret-for-tests|password-for-tests|scrypt\$|hmac-sha256/);

    // Once applied, the same file plans nothing: the plan and applySeed agree.
    await apply(database, changed);
    expect(await planSeed(database.handle.db, changed, context)).toEqual({
      changes: [],
      undoes: [],
      keeps: [],
    });
  });

  it('re-enables an entry the seed had disabled when the file names it again', async () => {
    const database = await applied();
    await apply(
      database,
      withUsers(baseSeed(), (all) => all.filter((user) => user.sub !== CAROL.sub)),
    );
    const plan = await planSeed(database.handle.db, baseSeed(), context);
    expect(plan.changes).toEqual([{ kind: 'users', id: CAROL.sub, action: 'enable', members: [] }]);
  });

  it('keeps a user an operator disabled, and says so', async () => {
    const database = await applied();
    await setUserDisabledByOperator(database.handle.db, DAVE.sub, NOW + 10);
    const plan = await planSeed(database.handle.db, baseSeed(), context);
    expect(plan.changes).toEqual([]);
    expect(plan.keeps).toEqual([{ kind: 'users', id: DAVE.sub, reason: 'disabled_by_operator' }]);
    expect(planHasChanges(plan)).toBe(false);
  });

  it('names a user an operator took over that the file takes back', async () => {
    const database = await applied();
    await apply(
      database,
      withUsers(baseSeed(), (all) => all.filter((user) => user.sub !== DAVE.sub)),
    );
    // The file dropped Dave (the seed disabled him); an operator enabled him again.
    await setUserDisabledByOperator(database.handle.db, DAVE.sub, null);
    const plan = await planSeed(database.handle.db, baseSeed(), context);
    expect(plan.undoes).toEqual([{ kind: 'users', id: DAVE.sub, reason: 'operator_managed' }]);
    expect(planHasChanges(plan)).toBe(true);
    expect(formatSeedPlan(plan, 'seed.json')).toContain('! users u-dave: an operator took this user over');
  });

  it('names a password set since that a changed entry would replace', async () => {
    const database = await applied();
    // The user changed her password on the account page (or an operator reset it).
    await database.handle.db
      .update(users)
      .set({ passwordHash: await hashPassword('carol-chose-this', { cost: TEST_PASSWORD_COST }) })
      .where(eq(users.sub, CAROL.sub));
    const unchangedEntry = await planSeed(database.handle.db, baseSeed(), context);
    expect(unchangedEntry.undoes).toEqual([]);

    const renamed = withUsers(baseSeed(), (all) =>
      all.map((user) => (user.sub === CAROL.sub ? { ...user, name: 'Carol Jones' } : user)),
    );
    const plan = await planSeed(database.handle.db, renamed, context);
    expect(plan.changes).toEqual([
      { kind: 'users', id: CAROL.sub, action: 'change', members: ['name', 'password'] },
    ]);
    expect(plan.undoes).toEqual([{ kind: 'users', id: CAROL.sub, reason: 'password_replaced' }]);
  });
});
