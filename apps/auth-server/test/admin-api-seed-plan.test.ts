import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SeedDocument } from '../src/schemas/seed.js';
import { basicAuthorization, FORM, form, startTestApp, type TestApp } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

/**
 * GET /admin/api/seed/plan reads the seed file again on each request: an edited file shows what
 * applying it would change before the restart that applies it; a broken one is a 422 problem.
 */

const READER_SECRET = 'reader-secret-0123456789abcdef';

function seedWithReader(): SeedDocument {
  const seed = testSeed();
  seed.clients = [
    ...(seed.clients ?? []),
    {
      client_id: 'reader',
      client_secret: READER_SECRET,
      grant_types: ['client_credentials'],
      scope: 'admin.read',
    },
  ];
  return seed;
}

let app: TestApp;
let close: () => Promise<void>;
let directory: string;
let seedFile: string;
let token: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'admin-seed-plan-'));
  seedFile = join(directory, 'seed.json');
  await writeFile(seedFile, JSON.stringify(seedWithReader()));
  ({ app, close } = await startTestApp({ env: { SEED_FILE: seedFile }, seed: seedWithReader() }));
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('reader', READER_SECRET) },
    payload: form({ grant_type: 'client_credentials', scope: 'admin.read' }),
  });
  token = response.json().access_token;
});
afterAll(async () => {
  await close();
  await rm(directory, { recursive: true, force: true });
});

const plan = () =>
  app.inject({ method: 'GET', url: '/admin/api/seed/plan', headers: { authorization: `Bearer ${token}` } });

describe('GET /admin/api/seed/plan', () => {
  it('has nothing to change while the file is what was applied', async () => {
    const response = await plan();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ hasChanges: false, changes: [], undoes: [], keeps: [] });
  });

  it('lists what an edited file would change, before any restart', async () => {
    const edited = seedWithReader();
    edited.clients = [
      ...(edited.clients ?? []).filter((entry) => entry.client_id !== 'spa'),
      {
        client_id: 'new-app',
        client_secret: 'n'.repeat(32),
        grant_types: ['client_credentials'],
        scope: 'orders.read',
      },
    ];
    await writeFile(seedFile, JSON.stringify(edited));
    const body = (await plan()).json();
    expect(body.hasChanges).toBe(true);
    expect(body.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'clients', id: 'new-app', action: 'add' }),
        expect.objectContaining({ kind: 'clients', id: 'spa', action: 'disable' }),
      ]),
    );
  });

  it('answers a file that does not parse 422 as problem details naming the problem', async () => {
    await writeFile(seedFile, '{ "clients": [ }');
    const response = await plan();
    expect(response.statusCode).toBe(422);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({
      error: 'invalid_seed',
      detail: expect.stringContaining('seed.json'),
    });
  });
});
