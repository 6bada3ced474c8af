import { IntlMessageFormat } from 'intl-messageformat';
import { escapeHtml, SafeHtml } from '../pages/html.js';
import type { MessageKey } from './catalogues/en.js';
import { DEFAULT_LANGUAGE, LANGUAGES, type Language } from './languages.js';

/** Values a message's `{placeholders}` take. */
export type MessageValues = Readonly<Record<string, string | number | Date>>;

/**
 * In HTML, also markup: a `SafeHtml` value, or for a tag of the message (`<left>…</left>`) the
 * element that wraps its content, so ids and `data-*` attributes stay out of the catalogue.
 */
export type HtmlMessageValues = Readonly<
  Record<string, string | number | Date | SafeHtml | ((content: SafeHtml) => SafeHtml)>
>;

/**
 * One language's words for pages and mails: ICU MessageFormat (plurals, selects, dates) through
 * `intl-messageformat`, so a translator writes `{count, plural, one {…} other {…}}` and the
 * language's own plural rules (CLDR: Arabic has six forms) apply.
 */
export interface Translator {
  readonly language: Language;
  readonly direction: 'ltr' | 'rtl';
  /** A message as plain text (mails' text parts, attributes, titles). */
  text(key: MessageKey, values?: MessageValues): string;
  /**
   * A message as HTML: its own text and every value escaped; the tags `<strong>`, `<code>` and
   * `<em>` in the message become those elements, and `SafeHtml` values (a link) go in as they are.
   */
  html(key: MessageKey, values?: HtmlMessageValues): SafeHtml;
  /** A date and time in the language, in the time zone the server states times in (UTC). */
  dateTime(at: Date): string;
}

const formats = new Map<string, IntlMessageFormat>();

function formatOf(language: Language, key: MessageKey): IntlMessageFormat {
  const id = `${language}\u0000${key}`;
  let format = formats.get(id);
  if (format === undefined) {
    format = new IntlMessageFormat(LANGUAGES[language].catalogue[key], language);
    formats.set(id, format);
  }
  return format;
}

const RICH_TAGS = ['strong', 'code', 'em'] as const;

function richTags(): Record<string, (chunks: unknown[]) => SafeHtml> {
  return Object.fromEntries(
    RICH_TAGS.map((tag) => [
      tag,
      (chunks: unknown[]) => new SafeHtml(`<${tag}>${chunks.map(htmlOfPart).join('')}</${tag}>`),
    ]),
  );
}

function wrapTags(values: HtmlMessageValues | undefined) {
  return Object.fromEntries(
    Object.entries(values ?? {}).map(([name, value]) => [
      name,
      typeof value === 'function' ? (chunks: unknown[]) => value(new SafeHtml(htmlOfPart(chunks))) : value,
    ]),
  );
}

function htmlOfPart(part: unknown): string {
  if (part instanceof SafeHtml) return part.value;
  if (Array.isArray(part)) return part.map(htmlOfPart).join('');
  return escapeHtml(String(part));
}

function createTranslator(language: Language): Translator {
  // Made at the first date shown, not at start: each language's formatter loads its ICU data.
  let dateTimeFormat: Intl.DateTimeFormat | undefined;
  const formatDateTime = (at: Date) => {
    dateTimeFormat ??= new Intl.DateTimeFormat(language, {
      dateStyle: 'long',
      timeStyle: 'long',
      timeZone: 'UTC',
    });
    return dateTimeFormat.format(at);
  };
  return {
    language,
    direction: LANGUAGES[language].direction,
    text: (key, values) => String(formatOf(language, key).format(values)),
    html(key, values) {
      // Rich-text parts come back as an array when the message has a tag or a SafeHtml value.
      const parts = formatOf(language, key).format<SafeHtml>({ ...richTags(), ...wrapTags(values) });
      return new SafeHtml(htmlOfPart(parts));
    },
    dateTime: formatDateTime,
  };
}

const translators = Object.fromEntries(
  Object.keys(LANGUAGES).map((language) => [language, createTranslator(language as Language)]),
) as Record<Language, Translator>;

export function translatorFor(language: Language): Translator {
  return translators[language];
}

/** The fallback language's translator, for callers that have no person to ask (operator commands). */
export const ENGLISH: Translator = translatorFor(DEFAULT_LANGUAGE);

/** What a page template needs of its language: the words, and where the switcher returns to. */
export interface PageLanguage {
  readonly t: Translator;
  /** The page's own URL when the switcher may show; absent, the page has no switcher. */
  readonly switchReturnTo?: string | undefined;
}

/** Pages rendered with no request to ask (and the default of page inputs): English, no switcher. */
export const ENGLISH_PAGE: PageLanguage = { t: ENGLISH };

/**
 * The language of a mail to an account: the one its user last signed in with (`users.locale`),
 * else the fallback. Mails have no request to negotiate with.
 */
export function translatorForAccount(account: { locale: string | null } | null | undefined): Translator {
  const locale = account?.locale;
  return Object.hasOwn(LANGUAGES, locale ?? '') ? translatorFor(locale as Language) : ENGLISH;
}
