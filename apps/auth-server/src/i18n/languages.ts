/**
 * The languages of the pages and mails, one line each: adding a language is its catalogue file
 * (./catalogues/<code>.ts) and its line here (docs/languages.md). The order is the language
 * switcher's; the first is the fallback when nothing else matches.
 */
import { ar } from './catalogues/ar.js';
import { de } from './catalogues/de.js';
import { type Catalogue, en } from './catalogues/en.js';
import { fr } from './catalogues/fr.js';

export interface LanguageEntry {
  catalogue: Catalogue;
  /** Written direction of the script (HTML `dir`): the layout mirrors for `rtl`. */
  direction: 'ltr' | 'rtl';
  /** The language's own name, as the switcher shows it to someone who reads it. */
  nativeName: string;
}

export const LANGUAGES = {
  en: { catalogue: en, direction: 'ltr', nativeName: 'English' },
  de: { catalogue: de, direction: 'ltr', nativeName: 'Deutsch' },
  fr: { catalogue: fr, direction: 'ltr', nativeName: 'Français' },
  ar: { catalogue: ar, direction: 'rtl', nativeName: 'العربية' },
} as const satisfies Record<string, LanguageEntry>;

export type Language = keyof typeof LANGUAGES;

/** Discovery's `ui_locales_supported` (OIDC Discovery §3) and the candidates of `chooseLanguage`. */
export const SUPPORTED_LANGUAGES = Object.keys(LANGUAGES) as Language[];

export const DEFAULT_LANGUAGE: Language = 'en';

export function isSupportedLanguage(tag: string | null | undefined): tag is Language {
  return typeof tag === 'string' && Object.hasOwn(LANGUAGES, tag);
}
