import { describe, expect, it } from 'vitest';
import { formKeyOf } from '../src/account/account-result.js';
import { renderAccountPage } from '../src/pages/account.js';
import { renderConsentPage } from '../src/pages/consent.js';
import { renderFormPostPage } from '../src/pages/form-post.js';
import { renderHomePage } from '../src/pages/home.js';
import { escapeHtml, html } from '../src/pages/html.js';
import { renderLinkAccountPage } from '../src/pages/link-account.js';
import { renderLoginPage } from '../src/pages/login.js';
import { renderRecoveryCodesShownPage } from '../src/pages/recovery.js';
import { contentSecurityPolicy } from '../src/pages/respond.js';
import { describeScope } from '../src/pages/scope-descriptions.js';

describe('html template', () => {
  it('escapes every interpolated string, including quotes that could end an attribute', () => {
    const hostile = `"><script>alert('x')</script>&`;
    expect(html`<input value="${hostile}">`.value).toBe(
      '<input value="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">',
    );
    expect(escapeHtml('`')).toBe('&#96;');
  });

  it('inserts nested templates unescaped and arrays element by element; null, undefined and false render nothing', () => {
    const items = ['a<b', 'c'].map((item) => html`<li>${item}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value).toBe(
      '<ul><li>a&lt;b</li><li>c</li></ul>0',
    );
  });
});

describe('pages', () => {
  it('login page: one post form with username, password and the CSRF field, labelled, no inline script', () => {
    const page = renderLoginPage({ clientName: '<Evil & Co>', csrfToken: 'tok"en', basePath: '' });
    expect(page.match(/<form /g)).toHaveLength(1);
    expect(page).toContain('<form method="post"');
    expect(page).toContain('name="username"');
    expect(page).toContain('name="password" type="password"');
    expect(page).toContain('<label for="username">');
    expect(page).toContain('<label for="password">');
    expect(page).toContain('<input type="hidden" name="csrf" value="tok&quot;en">');
    expect(page).toContain('&lt;Evil &amp; Co&gt;');
    expect(page).not.toMatch(/<script(?![^>]*\ssrc=)/);
    expect(page).toContain('<link rel="stylesheet" href="/assets/styles.css">');
  });

  it('consent page: approve and deny buttons named decision, the client named, every scope explained', () => {
    const page = renderConsentPage({
      clientName: 'Orders',
      userDisplayName: 'Alice',
      scopes: ['openid', 'email', 'orders.read'],
      csrfToken: 't',
      basePath: '/auth',
    });
    expect(page).toContain('name="decision" value="approve"');
    expect(page).toContain('name="decision" value="deny"');
    expect(page).toContain('<strong>Orders</strong>');
    for (const scope of ['openid', 'email', 'orders.read']) expect(page).toContain(describeScope(scope));
    expect(page).toContain('href="/auth/assets/styles.css"');
    // The promise it makes is kept by the account page's "apps with access" (revocable there).
    expect(page).toContain('<a href="/auth/account">your account page</a>');
    // After the buttons: a keyboard user reaches Deny first (e2e/test/public-spa.test.ts).
    expect(page.indexOf('/auth/account')).toBeGreaterThan(page.indexOf('value="approve"'));
    expect(page).not.toContain('signing out');
  });

  it('form_post page: the fields as hidden inputs posting to the redirect URI, submitted by an external script', () => {
    const page = renderFormPostPage({
      action: 'https://rp.example/cb?x=1&y=2',
      fields: { code: 'abc', state: '"s"', iss: 'https://op.example' },
      basePath: '',
    });
    expect(page).toContain('<form method="post" action="https://rp.example/cb?x=1&amp;y=2"');
    expect(page).toContain('<input type="hidden" name="code" value="abc">');
    expect(page).toContain('<input type="hidden" name="state" value="&quot;s&quot;">');
    expect(page).toContain('<script src="/assets/form-post.js" defer></script>');
    expect(page).toContain('<button type="submit"');
  });

  it('scope descriptions are plain words, never empty', () => {
    expect(describeScope('email')).toBe('See your email address');
    expect(describeScope('orders.write')).toBe('Create and change your orders');
    expect(describeScope('weird')).toContain('weird');
  });

  it('account page: the e-mail block has its own h2, and the headings never skip a level', () => {
    const page = renderAccountPage({
      name: 'Alice',
      email: 'alice@example.com',
      emailVerified: false,
      canVerifyEmail: true,
      username: 'alice',
      csrfToken: 'token',
      authenticatorApps: [],
      passkeys: [],
      recoveryCodesRemaining: 10,
      sessions: [],
      apps: [],
      signOut: { action: '/logout', csrfToken: 'logout-token' },
      basePath: '',
    });
    const section =
      /<section aria-labelledby="email-title">\s*<h2 id="email-title">([^<]+)<\/h2>([\s\S]*?)<\/section>/.exec(
        page,
      );
    expect(section?.[1]).toBe('E-mail address');
    expect(section?.[2]).toContain('data-email-verified="false"');
    expect(section?.[2]).toContain('<label for="new_email">New e-mail address</label>');
    // WCAG 2.2 SC 1.3.1: one h1, then h2 sections; no level is skipped.
    const levels = [...page.matchAll(/<h([1-6])[\s>]/g)].map((match) => Number(match[1]));
    expect(levels[0]).toBe(1);
    expect(levels.filter((level) => level === 1)).toHaveLength(1);
    for (const [index, level] of levels.entries()) {
      if (index > 0) expect(level).toBeLessThanOrEqual((levels[index - 1] ?? 1) + 1);
    }
    expect(levels.indexOf(2)).toBe(levels.indexOf(1) + 1);
    expect(page.indexOf('id="email-title"')).toBeLessThan(page.indexOf('id="factors-title"'));
  });

  it('account page: each "Unlink" button names its provider (WCAG 2.4.6, 2.5.3)', () => {
    const page = renderAccountPage({
      name: 'Alice',
      email: 'alice@example.com',
      username: 'alice',
      csrfToken: 'token',
      authenticatorApps: [],
      passkeys: [],
      recoveryCodesRemaining: 10,
      sessions: [],
      apps: [],
      linkedProviders: [
        { providerId: 'corp', displayName: 'Corp account', lastSignInAt: null },
        { providerId: 'google', displayName: 'Google', lastSignInAt: null },
      ],
      signOut: { action: '/logout', csrfToken: 'logout-token' },
      basePath: '',
    });
    const names = [...page.matchAll(/data-action="unlink-provider" aria-label="([^"]+)">Unlink</g)].map(
      (match) => match[1],
    );
    expect(names).toEqual(['Unlink Corp account', 'Unlink Google']);
  });

  it('link-account page: with both proofs, "E-mail me a link" is a styled secondary button', () => {
    const input = {
      providerName: 'Corp',
      email: 'alice@example.com',
      csrfToken: 'token',
      linkToken: 'link',
      passwordAction: '/password',
      mailAction: '/mail',
      loginUrl: '/login',
      basePath: '',
    };
    const mailButton = (page: string) => /<button type="submit"([^>]*)>E-mail me a link</.exec(page)?.[1];
    expect(mailButton(renderLinkAccountPage(input))).toBe(' class="secondary"');
    expect(mailButton(renderLinkAccountPage({ ...input, passwordAction: null }))).toBe(' class="primary"');
  });

  it('account page: sessions escape what the client sent (device name, forwarded address)', () => {
    const page = renderAccountPage({
      name: null,
      email: null,
      username: 'alice',
      csrfToken: 'token',
      authenticatorApps: [],
      passkeys: [],
      recoveryCodesRemaining: 0,
      sessions: [
        {
          id: 's1',
          device: '<img src=x onerror=alert(1)>',
          ip: '"><script>alert(2)</script>',
          createdAt: 1_700_000_000,
          lastUsedAt: null,
          current: true,
        },
      ],
      apps: [],
      signOut: { action: '/logout', csrfToken: 'logout-token' },
      basePath: '',
    });
    expect(page).toContain('<strong>&lt;img src=x onerror=alert(1)&gt;</strong> (this session)');
    expect(page).toContain('from &quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    // Times carry their zone, and a machine-readable datetime.
    expect(page).toContain(
      'Signed in <time datetime="2023-11-14T22:13:20.000Z">2023-11-14 22:13 UTC</time> from',
    );
    expect(page).not.toContain('<script>alert');
  });

  it('the start page names the one file with the demo passwords, the one the pnpm dev banner names', () => {
    const development = { clients: [], usernames: ['alice'] };
    const dev = renderHomePage({
      issuer: 'http://localhost:4000',
      basePath: '',
      development: { ...development, seedFile: '/repo/.data/dev-seed.json' },
    });
    expect(dev).toContain('Their passwords are in <code>/repo/.data/dev-secrets.json</code>.');
    const own = renderHomePage({
      issuer: 'http://localhost:4000',
      basePath: '',
      development: { ...development, seedFile: '/etc/seed.json' },
    });
    expect(own).toContain('Their passwords are in <code>/etc/seed.json</code>.');
  });

  it('recovery codes come with Download (no script needed) and a Copy button its script shows', () => {
    const codes = ['ABCDE-23456', 'FGHJK-789AB'];
    const page = renderRecoveryCodesShownPage({ codes, continueCsrfToken: 't', basePath: '' });
    const href = /href="(data:[^"]+)" download="recovery-codes.txt"/.exec(page)![1]!;
    expect(decodeURIComponent(href.slice('data:text/plain;charset=utf-8,'.length))).toBe(
      'ABCDE-23456\nFGHJK-789AB\n',
    );
    expect(page).toContain(
      '<button type="button" class="secondary" id="copy-recovery-codes" hidden>Copy</button>',
    );
    expect(page).toContain('<script src="/assets/recovery-codes.js" defer></script>');
  });

  it('an account POST path names the form its result belongs to, behind a path prefix too', () => {
    expect(formKeyOf('/account/password')).toBe('password');
    expect(formKeyOf('/account/totp/abc/rename')).toBe('totp-abc');
    expect(formKeyOf('/id/account/sessions/s-1/end?x=1')).toBe('sessions-s-1');
    expect(formKeyOf('/account/apps/orders%20web/revoke')).toBe('apps-orders web');
  });

  it('the CSP allows only this origin, no framing, and the given form targets', () => {
    const csp = contentSecurityPolicy(['https://rp.example']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("form-action 'self' https://rp.example");
    expect(csp).not.toContain('unsafe-inline');
  });
});
