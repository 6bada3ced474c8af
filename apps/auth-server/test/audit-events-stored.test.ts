import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIT_EVENTS, audit } from '../src/audit.js';
import { locationOf } from './browser.js';
import { startTestApp } from './helpers/app.js';
import { openLoginPage, submitLogin } from './helpers/security.js';
import { ALICE, signInSeed } from './sign-in-fixtures.js';

/**
 * Every audit event of the app is stored besides its log line (src/plugins/audit-events.ts): from a
 * request's logger as from the app's, scrubbed like the log line, and without a sign-in ever
 * depending on the audit table.
 */

let started: Awaited<ReturnType<typeof startTestApp>>;

beforeAll(async () => {
  started = await startTestApp({ seed: signInSeed() });
});
afterAll(async () => {
  await started?.close();
});

async function storedFor(sub: string) {
  await started.app.auditEventWriter.flush();
  return (await started.app.auditEvents.query({ sub, limit: 50 })).events;
}

describe('stored audit events', () => {
  it('stores a sign-in failure and success with subject, client, IP and outcome', async () => {
    const wrong = await openLoginPage(started.app);
    expect(
      (await submitLogin(wrong.browser, wrong.page, ALICE.username, 'not-her-password')).statusCode,
    ).toBe(401);
    const right = await openLoginPage(started.app);
    const redirect = await submitLogin(right.browser, right.page, ALICE.username, ALICE.password);
    expect(locationOf(redirect).searchParams.get('code')).toBeTruthy();

    const [succeeded, failed] = await storedFor(ALICE.sub);
    expect(succeeded).toMatchObject({
      event: AUDIT_EVENTS.loginSucceeded,
      sub: ALICE.sub,
      clientId: 'web',
      ip: '127.0.0.1',
      actor: null,
      outcome: 'success',
    });
    expect(failed).toMatchObject({
      event: AUDIT_EVENTS.loginFailed,
      sub: ALICE.sub,
      outcome: 'failure',
      details: expect.objectContaining({ reason: 'wrong_password' }),
    });
    expect(JSON.stringify(failed)).not.toContain('not-her-password');
  });

  it('stores the acting operator, and a secret-looking detail only redacted', async () => {
    const leaked = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    audit(started.app.log, AUDIT_EVENTS.adminUserDisabled, {
      sub: 'u-scrubbed',
      actor: 'u-operator',
      reason: `password=hunter2 and ${leaked}`,
    });
    const [stored] = await storedFor('u-scrubbed');
    expect(stored).toMatchObject({ event: AUDIT_EVENTS.adminUserDisabled, actor: 'u-operator' });
    const row = JSON.stringify(stored);
    expect(row).not.toContain('hunter2');
    expect(row).not.toContain(leaked);
    expect(stored?.details.reason).toBe('password=[redacted] and [redacted]');
  });

  it('signs in while the audit table is unavailable, and stores the event once it is back', async () => {
    const db = started.database.handle.db;
    await db.execute(sql`alter table audit_events rename to audit_events_away`);
    try {
      const { browser, page } = await openLoginPage(started.app);
      const redirect = await submitLogin(browser, page, ALICE.username, ALICE.password);
      expect(locationOf(redirect).searchParams.get('code')).toBeTruthy();
      await started.app.auditEventWriter.flush();
      expect(started.app.auditEventWriter.queued).toBeGreaterThan(0);
    } finally {
      await db.execute(sql`alter table audit_events_away rename to audit_events`);
    }
    const before = (await storedFor(ALICE.sub)).filter(
      (event) => event.event === AUDIT_EVENTS.loginSucceeded,
    );
    expect(before).toHaveLength(2);
    expect(started.app.auditEventWriter.queued).toBe(0);
    // The failed write was counted, for an alert on a longer outage.
    const metrics = await started.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^auth_server_audit_event_write_failures_total [1-9]/m);
    expect(metrics.body).toMatch(/^auth_server_audit_events_dropped_total \d+/m);
  });
});
