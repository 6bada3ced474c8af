/**
 * Debian's Chromium driven by playwright-core, as a person's browser: headless, a fresh profile
 * per launch (no cookies, storage or cache from another test), and no background traffic.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { repositoryRoot } from './processes.js';

/** Debian's package; CHROMIUM_PATH points elsewhere (e.g. /usr/bin/google-chrome on a CI image). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Where every page's screenshot goes (gitignored, kept by CI as an artifact). */
export const SCREENSHOT_DIR = join(repositoryRoot, 'test-artifacts', 'screenshots');

export interface TestBrowser {
  context: BrowserContext;
  /** The window the profile opened with. */
  page: Page;
  /** Console messages reporting a Content-Security-Policy violation, on any page. */
  cspViolations: string[];
  /** Saves `<name>.png` (the whole page) under test-artifacts/screenshots; returns the path. */
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** Extra switches and environment (the Kerberos suite: an allow-list and a credential cache). */
export interface LaunchOptions {
  args?: string[];
  env?: Record<string, string>;
}

export async function launchBrowser(options: LaunchOptions = {}): Promise<TestBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'e2e-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS, ...(options.args ?? [])],
    ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    viewport: { width: 1024, height: 720 },
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(30_000);
  context.setDefaultNavigationTimeout(60_000);
  const cspViolations: string[] = [];
  context.on('console', (message) => {
    if (/Content[ -]Security[ -]Policy/i.test(message.text())) {
      cspViolations.push(`${message.page()?.url() ?? '?'}: ${message.text()}`);
    }
  });
  const page = context.pages()[0] ?? (await context.newPage());
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  return {
    context,
    page,
    cspViolations,
    async screenshot(target, name) {
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      await target.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
