import { describe, expect, it } from 'vitest';
import { chooseLanguage, rankAcceptLanguage } from '../src/i18n/choose-language.js';

const supported = ['en', 'de', 'fr', 'ar'] as const;

describe('chooseLanguage', () => {
  it.each([
    // [case, input, language, source]
    [
      'ui_locales first, over the cookie and the header',
      { uiLocales: 'de', cookie: 'fr', acceptLanguage: 'ar' },
      'de',
      'ui_locales',
    ],
    [
      'ui_locales in its order of preference, skipping what is not supported',
      { uiLocales: 'ja fr-CA de' },
      'fr',
      'ui_locales',
    ],
    ['a region falls back to its language', { uiLocales: 'AR-eg' }, 'ar', 'ui_locales'],
    [
      'the cookie when ui_locales names nothing supported',
      { uiLocales: 'ja', cookie: 'ar', acceptLanguage: 'de' },
      'ar',
      'cookie',
    ],
    [
      'a cookie of an unsupported language is ignored',
      { cookie: 'xx', acceptLanguage: 'de' },
      'de',
      'accept-language',
    ],
    [
      'Accept-Language by weight, not by order',
      { acceptLanguage: 'ja;q=0.9, fr;q=0.5, de;q=0.8' },
      'de',
      'accept-language',
    ],
    ['q=0 means not acceptable', { acceptLanguage: 'de;q=0, fr' }, 'fr', 'accept-language'],
    ['the fallback when nothing matches', { acceptLanguage: 'ja, *' }, 'en', 'default'],
    ['the fallback with no input at all', {}, 'en', 'default'],
  ] as const)('%s', (_case, input, language, source) => {
    expect(chooseLanguage({ ...input, supported })).toEqual({ language, source });
  });
});

describe('rankAcceptLanguage', () => {
  it('orders by q, keeps the header order among equals, drops * and q=0', () => {
    expect(rankAcceptLanguage('fr-CH, fr;q=0.9, en;q=0.8, de;q=0.8, *;q=0.5, ja;q=0')).toEqual([
      'fr-CH',
      'fr',
      'en',
      'de',
    ]);
  });
});
