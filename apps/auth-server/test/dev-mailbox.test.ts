import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hiddenFields, TestBrowser } from './browser.js';
import { startTestApp } from './helpers/app.js';
import { openLoginPage } from './helpers/security.js';

/**
 * Mail without SMTP_URL (README "Email"): outside production each mail is a file in the dev
 * mailbox, readable at /dev/mailbox; in production there is no mail, so the login page shows no
 * forgot-password link and neither page exists.
 */

describe('the dev mailbox (no SMTP_URL, outside production)', () => {
  let directory: string;
  let started: Awaited<ReturnType<typeof startTestApp>>;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'dev-mailbox-'));
    started = await startTestApp({ env: { MAIL_DEV_DIR: directory } });
  });
  afterAll(async () => {
    await started?.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('keeps the reset mail as a file and lists it on a page whose link opens the reset form', async () => {
    const { app } = started;
    const browser = new TestBrowser(app);
    const form = await browser.get('/forgot-password');
    await browser.post('/forgot-password', { ...hiddenFields(form.body), email: 'alice@example.test' });
    await app.passwordRecovery!.settled();
    expect(readdirSync(directory).filter((name) => name.endsWith('.json'))).toHaveLength(1);
    const list = await browser.get('/dev/mailbox');
    expect(list.statusCode).toBe(200);
    const mailHref = /<a href="(\/dev\/mailbox\/[^"]+)">Reset your password/.exec(list.body)?.[1];
    const mail = await browser.get(mailHref!);
    const link = /<a href="(https:\/\/issuer\.example\.test\/reset-password\?token=[^"]+)"/.exec(
      mail.body,
    )?.[1];
    expect((await browser.get(link!.replace(/&amp;/g, '&'))).body).toContain('name="new_password"');
  });

  it('answers 404 for a mail that is not there', async () => {
    expect((await started.app.inject({ url: '/dev/mailbox/..%2F..%2Fetc' })).statusCode).toBe(404);
  });
});

describe('production without SMTP_URL', () => {
  it('shows no forgot-password link and serves neither the forgot-password page nor the dev mailbox', async () => {
    const started = await startTestApp({ env: { NODE_ENV: 'production' } });
    try {
      const { page } = await openLoginPage(started.app);
      expect(page.body).not.toContain('data-action="forgot-password"');
      expect((await started.app.inject({ url: '/forgot-password' })).statusCode).toBe(404);
      expect((await started.app.inject({ url: '/dev/mailbox' })).statusCode).toBe(404);
    } finally {
      await started.close();
    }
  });
});
