/**
 * The page table (src/endpoints.ts `INTERACTION_PAGES`, `PAGES`) held against the running app:
 * every row a route where its part is configured, and every interaction route a row. A page
 * added without its row, or a row left behind, fails here.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERACTION_PAGES, interactionPagePath, PAGES } from '../src/endpoints.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

/** An app with every optional page on: mail (the dev mailbox in tests) and upstream providers. */
const routes: RouteOptions[] = [];
let app: TestApp;
let close: () => Promise<void>;
let mailbox: string;
beforeAll(async () => {
  const provider = {
    id: 'corp',
    issuer: 'https://login.example.test/tenant',
    client_id: 'our-server',
    client_secret: 'secret-for-tests',
    scope: 'openid',
    display_name: 'Corp',
  };
  mailbox = await mkdtemp(join(tmpdir(), 'page-paths-mail-'));
  ({ app, close } = await startTestApp({
    env: { MAIL_DEV_DIR: mailbox },
    seed: { ...testSeed(), identity_providers: [provider] },
    onRoute: (route) => routes.push(route),
  }));
});
afterAll(async () => {
  await close();
  await rm(mailbox, { recursive: true, force: true });
});

const paths = () => new Set(routes.map((route) => route.url));

describe('the page table against the app', () => {
  it('has a route for every page row whose part is on', () => {
    const on = {
      mail: app.passwordRecovery !== null,
      'dev-mailbox': app.config.mail?.transport === 'dev-mailbox',
      identity_providers: app.federation !== null,
    };
    expect(Object.values(on)).toEqual([true, true, true]);
    const rows = Object.values(PAGES) as { path: string; enabledBy?: keyof typeof on }[];
    const missing = rows.filter((row) => !paths().has(row.path)).map((row) => row.path);
    expect(missing).toEqual([]);
  });

  it('has a route for every interaction step but those of Kerberos and the directory (KRB5_KTNAME, LDAP_URL)', () => {
    const missing = INTERACTION_PAGES.filter((page) => !paths().has(interactionPagePath(page)));
    expect(missing).toEqual(['kerberos', 'directory-password']);
  });

  it('has a row for every interaction route', () => {
    const rows = new Set<string>([
      ...INTERACTION_PAGES.map((page) => interactionPagePath(page)),
      ...Object.values(PAGES).map((row) => row.path),
    ]);
    const unlisted = [...paths()].filter((path) => path.startsWith('/interaction/') && !rows.has(path));
    expect(unlisted).toEqual([]);
  });
});
