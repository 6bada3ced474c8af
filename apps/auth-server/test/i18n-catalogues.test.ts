import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { en } from '../src/i18n/catalogues/en.js';
import { LANGUAGES, SUPPORTED_LANGUAGES } from '../src/i18n/languages.js';
import { translatorFor } from '../src/i18n/translator.js';
import type { SafeHtml } from '../src/pages/html.js';

/**
 * Every catalogue has exactly the source's keys, and each message the same placeholders and tags
 * as its English source: a translation that drops `{minutes}` or invents `{count}` fails here, as
 * does a key left out (which also fails to compile) or one the source no longer has.
 */

type AstElement = {
  type: number;
  value?: string;
  children?: AstElement[];
  options?: Record<string, { value: AstElement[] }>;
};

// intl-messageformat's AST element types (TYPE in @formatjs/icu-messageformat-parser).
const ARGUMENT_TYPES = new Set([1, 2, 3, 4, 5, 6]);
const TAG = 8;

/** The `{placeholders}` and `<tags>` a message uses, however deep in plurals and selects. */
export function partsOf(message: string, locale: string): string[] {
  const found = new Set<string>();
  const walk = (elements: readonly AstElement[]) => {
    for (const element of elements) {
      if (ARGUMENT_TYPES.has(element.type)) found.add(`{${element.value}}`);
      if (element.type === TAG) found.add(`<${element.value}>`);
      walk(element.children ?? []);
      for (const option of Object.values(element.options ?? {})) walk(option.value);
    }
  };
  walk(new IntlMessageFormat(message, locale).getAst() as AstElement[]);
  return [...found].sort();
}

/** Problems of a catalogue against the source: missing, extra, or placeholders that differ. */
export function catalogueProblems(
  source: Readonly<Record<string, string>>,
  catalogue: Readonly<Record<string, string>>,
  locale: string,
): string[] {
  const problems: string[] = [];
  for (const key of Object.keys(source)) {
    if (!Object.hasOwn(catalogue, key)) {
      problems.push(`${key}: missing`);
      continue;
    }
    const expected = partsOf(source[key] ?? '', 'en').join(' ');
    const actual = partsOf(catalogue[key] ?? '', locale).join(' ');
    if (expected !== actual)
      problems.push(`${key}: has ${actual || 'none'}, the source ${expected || 'none'}`);
  }
  for (const key of Object.keys(catalogue)) {
    if (!Object.hasOwn(source, key)) problems.push(`${key}: not in the source`);
  }
  return problems;
}

describe('the catalogues', () => {
  for (const language of SUPPORTED_LANGUAGES) {
    it(`${language}: every key of the source, with the same placeholders and tags`, () => {
      expect(catalogueProblems(en, LANGUAGES[language].catalogue, language)).toEqual([]);
    });
  }

  it('the check finds a missing key, a placeholder the source lacks, one dropped, and an extra key', () => {
    const source = { a: 'Wait {minutes} minutes', b: 'Hello <strong>{name}</strong>', c: 'Plain' };
    const broken = { a: 'Warten Sie {count} Minuten', b: 'Hallo {name}', d: 'Extra' };
    expect(catalogueProblems(source, broken, 'de')).toEqual([
      'a: has {count}, the source {minutes}',
      'b: has {name}, the source <strong> {name}',
      'c: missing',
      'd: not in the source',
    ]);
  });

  it('no translation is left as the English text, except names and codes that read the same', () => {
    // "Code" is the word in German and French too; the console writes times in UTC with a dash for none.
    const sameEverywhere = new Set(['error.code', 'device.code', 'console.time.utc', 'console.time.dash']);
    // Words German takes from English as they are (an operator's "Clients", "Status", "Scopes"), and
    // French's "minute(s)", spelt as in English.
    const sameInLanguage: Partial<Record<string, ReadonlySet<string>>> = {
      de: new Set([
        'console.nav.clients',
        'console.titles.clients',
        'console.users.name',
        'console.users.status',
        'console.user.passkeys',
        'console.clients.name',
        'console.clients.status',
        'console.clients.scopes',
        'console.keys.status',
      ]),
      fr: new Set(['console.time.minutes']),
    };
    for (const language of SUPPORTED_LANGUAGES.filter((code) => code !== 'en')) {
      const catalogue = LANGUAGES[language].catalogue;
      const same = sameInLanguage[language] ?? new Set<string>();
      const untranslated = Object.keys(en).filter(
        (key) =>
          !sameEverywhere.has(key) &&
          !same.has(key) &&
          catalogue[key as keyof typeof en] === en[key as keyof typeof en],
      );
      // French shares a few words with English ("Minute"), never a whole message.
      expect(untranslated, language).toEqual([]);
    }
  });

  it('every message of every language formats with sample values', () => {
    for (const language of SUPPORTED_LANGUAGES) {
      const t = translatorFor(language);
      for (const key of Object.keys(en) as (keyof typeof en)[]) {
        // Placeholders get a number (`unit` a select value), the page's own tags a wrapper.
        const values = Object.fromEntries(
          partsOf(en[key], 'en').map((part) => {
            const name = part.slice(1, -1);
            if (part.startsWith('<')) return [name, (content: SafeHtml) => content];
            return [name, name === 'unit' ? 'minutes' : 2];
          }),
        );
        expect(() => t.html(key, values), `${language} ${key}`).not.toThrow();
      }
    }
  });
});

describe('plurals and dates follow the language', () => {
  it('uses each language’s plural rules (Arabic has a dual)', () => {
    expect(translatorFor('en').text('login.tooManyAttempts', { unit: 'minutes', count: 1 })).toContain(
      '1 minute.',
    );
    expect(translatorFor('de').text('login.tooManyAttempts', { unit: 'seconds', count: 30 })).toContain(
      '30 Sekunden',
    );
    expect(translatorFor('ar').text('login.tooManyAttempts', { unit: 'minutes', count: 2 })).toContain(
      'دقيقتين',
    );
  });

  it('writes a date and time in the language, in UTC', () => {
    const at = new Date(Date.UTC(2026, 2, 5, 14, 30, 0));
    expect(translatorFor('en').dateTime(at)).toMatch(/March 5, 2026.*2:30:00\sPM UTC/);
    expect(translatorFor('de').dateTime(at)).toMatch(/5\. März 2026.*14:30:00 UTC/);
    expect(translatorFor('fr').dateTime(at)).toMatch(/5 mars 2026.*14:30:00 UTC/);
  });

  it('escapes values in HTML messages, and renders only the message’s own tags', () => {
    const lead = translatorFor('en').html('login.lead', { client: '<script>x</script>' }).value;
    expect(lead).toBe('to continue to <strong>&lt;script&gt;x&lt;/script&gt;</strong>');
  });
});
