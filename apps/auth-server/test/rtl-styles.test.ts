import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { translatorFor } from '../src/i18n/translator.js';
import { renderLoginPage } from '../src/pages/login.js';

/**
 * Arabic pages mirror (`dir="rtl"`): the stylesheet names sides only logically
 * (`margin-inline-start`, `border-inline-start`), so no rule pins anything to the left or right.
 */
describe('a layout that mirrors', () => {
  it('the stylesheet has no physical left/right property or value', () => {
    const css = readFileSync(new URL('../src/pages/styles.css', import.meta.url), 'utf8').replace(
      /\/\*[\s\S]*?\*\//g,
      '',
    );
    expect(css.match(/[\w-]*(?:left|right)[\w-]*\s*:|:\s*[^;]*\b(?:left|right)\b/g) ?? []).toEqual([]);
  });

  it('an Arabic page says so on <html>, an English one stays as it was', () => {
    const input = { clientName: 'App', csrfToken: 'x', basePath: '' };
    const arabic = renderLoginPage({ ...input, language: { t: translatorFor('ar') } });
    expect(arabic).toContain('<html lang="ar" dir="rtl">');
    expect(renderLoginPage(input)).toContain('<html lang="en">\n');
  });
});
