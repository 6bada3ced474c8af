import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { chooseLanguage, type LanguageChoice } from './choose-language.js';
import { isSupportedLanguage, type Language, SUPPORTED_LANGUAGES } from './languages.js';
import { type PageLanguage, type Translator, translatorFor } from './translator.js';

/** The switcher's choice, remembered for a year (a preference, not a credential: readable, no secret). */
export const LANGUAGE_COOKIE = 'lang';
const LANGUAGE_COOKIE_MAX_AGE = 365 * 24 * 3600;

/** Where the switcher's links go: `GET /language?set=de&return=/interaction/…/login`. */
export const LANGUAGE_SWITCH_PATH = '/language';

declare module 'fastify' {
  interface FastifyRequest {
    /** The page's language (./choose-language.ts); the interaction guard refines it with `ui_locales`. */
    language: Translator;
    /** How `language` was chosen, and where the switcher returns to (a GET page's own URL). */
    languageChoice: LanguageChoice<Language> & { returnTo: string | undefined };
  }
}

function cookieLanguage(request: FastifyRequest): string | undefined {
  return request.cookies?.[LANGUAGE_COOKIE];
}

/**
 * Chooses again the request's language with the interaction's stored `ui_locales` (OIDC Core
 * §3.1.2.1), which comes first: stored with the interaction, every instance and every step sees it.
 */
export function chooseRequestLanguage(request: FastifyRequest, uiLocales: string | undefined): void {
  const returnTo = request.languageChoice?.returnTo;
  const choice = chooseLanguage({
    uiLocales,
    cookie: cookieLanguage(request),
    acceptLanguage: request.headers['accept-language'],
    supported: SUPPORTED_LANGUAGES,
  });
  request.language = translatorFor(choice.language);
  request.languageChoice = { ...choice, returnTo };
}

/** The page's language for the templates: the switcher only where it can change something. */
export function pageLanguageOf(request: FastifyRequest): PageLanguage {
  const { source, returnTo } = request.languageChoice;
  // While `ui_locales` decides, a click on the switcher would change nothing on this sign-in.
  return { t: request.language, switchReturnTo: source === 'ui_locales' ? undefined : returnTo };
}

/**
 * A path on this server to go back to after switching: one leading slash, not `//` or `/\`
 * (protocol-relative URLs would leave the site: an open redirect).
 */
function safeReturnPath(value: unknown, basePath: string): string {
  const fallback = `${basePath}/`;
  if (typeof value !== 'string' || !value.startsWith(`${basePath}/`)) return fallback;
  return /^\/[/\\]/.test(value) ? fallback : value;
}

function switchLanguage(request: FastifyRequest, reply: FastifyReply, options: RequestLanguageOptions) {
  const { basePath } = options;
  const query = request.query as Record<string, unknown>;
  const set = typeof query.set === 'string' ? query.set : undefined;
  if (isSupportedLanguage(set)) {
    reply.setCookie(LANGUAGE_COOKIE, set, {
      path: basePath === '' ? '/' : basePath,
      sameSite: 'lax',
      httpOnly: true,
      secure: options.secure,
      maxAge: LANGUAGE_COOKIE_MAX_AGE,
    });
  }
  return reply.header('cache-control', 'no-store').redirect(safeReturnPath(query.return, basePath), 303);
}

/**
 * Where the switcher comes back to: this page's path, without its query, which may carry a URL
 * taken from the request (never echoed into a page) or a mailed link's token (never copied into
 * other links). A page whose query is a mailed link's token has no switcher (its path alone would
 * not open the link again), nor has a form's answer (POST), which GET cannot fetch again.
 */
function switcherReturnPath(request: FastifyRequest, options: RequestLanguageOptions): string | undefined {
  if (request.method !== 'GET') return undefined;
  const url = new URL(request.url, 'http://page.invalid');
  if (url.searchParams.has('token')) return undefined;
  return `${options.basePath}${url.pathname}`;
}

/**
 * Every browser page's language: `request.language` from the switcher's cookie and
 * `Accept-Language`, and the switcher's route. Needs `@fastify/cookie` registered first.
 */
export interface RequestLanguageOptions {
  /** The issuer's path prefix (`''` at the host root): the cookie's path and the return paths'. */
  basePath: string;
  /** The issuer is https: the cookie is `Secure`. */
  secure: boolean;
}

export const requestLanguagePlugin = fp<RequestLanguageOptions>(
  async (app, options) => {
    app.decorateRequest('language', null as unknown as Translator);
    app.decorateRequest('languageChoice', null as unknown as FastifyRequest['languageChoice']);
    app.addHook('onRequest', async (request) => {
      request.languageChoice = {
        language: 'en',
        source: 'default',
        returnTo: switcherReturnPath(request, options),
      };
      chooseRequestLanguage(request, undefined);
    });
    app.get(LANGUAGE_SWITCH_PATH, async (request, reply) => switchLanguage(request, reply, options));
  },
  { name: 'request-language', fastify: '5.x' },
);
