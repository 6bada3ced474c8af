/**
 * Which language a page speaks, in this order: the authorization request's `ui_locales`
 * (OIDC Core §3.1.2.1, "End-User's preferred languages and scripts for the user interface,
 * represented as a space-separated list of BCP47 language tag values, ordered by preference"),
 * then the language the person chose with the page's switcher (a cookie), then the browser's
 * `Accept-Language` (RFC 9110 §12.5.4), then the fallback.
 */
export interface LanguageChoiceInput<L extends string> {
  uiLocales?: string | undefined;
  cookie?: string | undefined;
  acceptLanguage?: string | undefined;
  /** The first is the fallback. */
  supported: readonly L[];
}

export interface LanguageChoice<L extends string> {
  language: L;
  /** What decided it (the switcher is pointless while `ui_locales` decides). */
  source: 'ui_locales' | 'cookie' | 'accept-language' | 'default';
}

export function chooseLanguage<L extends string>(input: LanguageChoiceInput<L>): LanguageChoice<L> {
  const { supported } = input;
  const fromUiLocales = firstSupported(splitUiLocales(input.uiLocales), supported);
  if (fromUiLocales !== undefined) return { language: fromUiLocales, source: 'ui_locales' };
  const fromCookie = firstSupported(input.cookie ? [input.cookie] : [], supported);
  if (fromCookie !== undefined) return { language: fromCookie, source: 'cookie' };
  const fromHeader = firstSupported(rankAcceptLanguage(input.acceptLanguage), supported);
  if (fromHeader !== undefined) return { language: fromHeader, source: 'accept-language' };
  const fallback = supported[0];
  if (fallback === undefined) throw new Error('chooseLanguage needs at least one supported language');
  return { language: fallback, source: 'default' };
}

function splitUiLocales(uiLocales: string | undefined): string[] {
  return (uiLocales ?? '').split(' ').filter((tag) => tag !== '');
}

/**
 * RFC 9110 §12.5.4: language ranges with their `q` weights, best first, `q=0` ("not acceptable")
 * and `*` dropped; equal weights keep the header's order (the sort is stable).
 */
export function rankAcceptLanguage(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .map((part) => {
      const [range = '', ...parameters] = part.trim().split(';');
      const q = parameters.map((p) => /^\s*q=([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
      return { range: range.trim(), weight: q === undefined ? 1 : Number(q) };
    })
    .filter((entry) => entry.range !== '' && entry.range !== '*' && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight)
    .map((entry) => entry.range);
}

/**
 * BCP 47 tags compare case-insensitively (RFC 5646 §2.1.1); a tag this server lacks falls back to
 * its primary language (`de-CH` → `de`, `zh-Hant-TW` → `zh`), the "lookup" of RFC 4647 §3.4.
 */
function firstSupported<L extends string>(tags: readonly string[], supported: readonly L[]): L | undefined {
  for (const tag of tags) {
    const lower = tag.toLowerCase();
    const exact = supported.find((language) => language.toLowerCase() === lower);
    if (exact !== undefined) return exact;
    const primary = lower.split('-')[0];
    const byPrimary = supported.find((language) => language.toLowerCase() === primary);
    if (byPrimary !== undefined) return byPrimary;
  }
  return undefined;
}
