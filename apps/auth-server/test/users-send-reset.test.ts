import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type SmtpFixture, startSmtpServer, urlsIn } from '@oidc-orders/service-kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestBrowser } from './browser.js';
import { startTestApp, TEST_ISSUER, TEST_KEY_ENCRYPTION_KEY, type TestApp } from './helpers/app.js';
import { createPostgresTestDatabase, postgresForThisFile, type TestDatabase } from './helpers/database.js';

/**
 * `users send-reset <username>` mails a reset link from the operator's process (SMTP_URL as the
 * server's), and `users show` says whether the address is verified (README "Email").
 */
const postgres = await postgresForThisFile('test/users-send-reset.test.ts');

describe.runIf(postgres)('users send-reset and show', () => {
  let database: TestDatabase;
  let smtp: SmtpFixture;
  let app: TestApp;
  let close: () => Promise<void>;

  beforeAll(async () => {
    database = await createPostgresTestDatabase();
    smtp = await startSmtpServer();
    ({ app, close } = await startTestApp({ database, env: { SMTP_URL: smtp.url } }));
  });
  afterAll(async () => {
    await close?.();
    await database?.drop();
    await smtp?.close();
  });

  async function users(args: string[], env: Record<string, string> = { SMTP_URL: smtp.url }) {
    if (database.location.driver !== 'pg') throw new Error('the CLI needs a shared database');
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/users.ts', ...args], {
      cwd: join(import.meta.dirname, '..'),
      env: {
        ...process.env,
        NODE_ENV: 'production',
        DATABASE_URL: database.location.connectionString,
        ISSUER: TEST_ISSUER,
        KEY_ENCRYPTION_KEY: TEST_KEY_ENCRYPTION_KEY,
        ...env,
      },
    });
    return run.then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  }

  it('show says whether the address is verified', async () => {
    expect((await users(['show', 'alice'])).stdout).toContain(
      'email=alice@example.test\temail_verified=true',
    );
  });

  it('send-reset mails a link that opens the reset form; the output names no link', async () => {
    const run = await users(['send-reset', 'alice']);
    expect(run).toMatchObject({ code: 0, stdout: 'reset link mailed to alice@example.test for alice\n' });
    const mail = await smtp.nextMailTo('alice@example.test');
    const [link] = urlsIn(mail.parsed.text);
    expect(`${run.stdout}${run.stderr}`).not.toContain(link!);
    expect((await new TestBrowser(app).get(link!)).body).toContain('name="new_password"');
  });

  it('send-reset fails with a clear line when mail is off or cannot be sent', async () => {
    const off = await users(['send-reset', 'alice'], {});
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('mail is off: set SMTP_URL');
    const down = await users(['send-reset', 'alice'], { SMTP_URL: 'smtp://localhost:1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('could not send the mail');
  });
});
