import { LANGUAGES, SUPPORTED_LANGUAGES } from '../i18n/languages.js';
import { LANGUAGE_SWITCH_PATH } from '../i18n/request-language.js';
import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html, type SafeHtml } from './html.js';

export interface PageFrame {
  /** Becomes `<title>` and the `<h1>`. */
  title: string;
  body: SafeHtml;
  /**
   * URL path prefix of the issuer (`''` for an issuer at the host root), so asset links keep
   * working when the server is published under a path behind a gateway.
   */
  basePath: string;
  /** External scripts only: the CSP forbids inline script (`script-src 'self'`). */
  scripts?: readonly string[];
  /**
   * Navigate here at once (`<meta http-equiv="refresh" content="0; url=…">`): a new navigation,
   * not part of a form submission, so the CSP `form-action` of the page that posted does not
   * govern it. The page body should hold the same URL as a link for people to follow themselves.
   */
  refreshTo?: string;
  /** The page's language (`<html lang dir>`) and its switcher; English without one when absent. */
  language?: PageLanguage;
}

/**
 * The language switcher: plain links (no script, no form: the CSP and a browser without script
 * both allow them), each named in its own language, to a route that remembers the choice in a
 * cookie and comes back to this page. The current language is marked, not linked.
 */
function renderLanguageSwitcher(language: PageLanguage, basePath: string): SafeHtml | null {
  if (language.switchReturnTo === undefined) return null;
  const returnTo = encodeURIComponent(language.switchReturnTo);
  const links = SUPPORTED_LANGUAGES.map((code) => {
    const name = LANGUAGES[code].nativeName;
    if (code === language.t.language)
      return html`<li><span aria-current="true" lang="${code}">${name}</span></li>`;
    return html`<li><a href="${basePath}${LANGUAGE_SWITCH_PATH}?set=${code}&amp;return=${returnTo}" hreflang="${code}" lang="${code}" data-language="${code}">${name}</a></li>`;
  });
  return html`<nav class="languages" aria-label="${language.t.text('layout.languages')}"><ul>${links}</ul></nav>
`;
}

/** The shared document shell: one stylesheet, no inline script or style, a labelled main region. */
export function renderPage(frame: PageFrame): string {
  const language = frame.language ?? ENGLISH_PAGE;
  const scripts = (frame.scripts ?? []).map(
    (name) => html`<script src="${frame.basePath}/assets/${name}" defer></script>`,
  );
  // HTML `dir` only for right-to-left: left-to-right is the default, and English stays as it was.
  const dir = language.t.direction === 'rtl' ? html` dir="rtl"` : null;
  return html`<!doctype html>
<html lang="${language.t.language}"${dir}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
${frame.refreshTo === undefined ? null : html`<meta http-equiv="refresh" content="0; url=${frame.refreshTo}">`}
<title>${frame.title}</title>
<link rel="icon" href="${frame.basePath}/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${frame.basePath}/assets/styles.css">
${scripts}
</head>
<body>
<main class="card" aria-labelledby="page-title">
<h1 id="page-title">${frame.title}</h1>
${frame.body}
</main>
${renderLanguageSwitcher(language, frame.basePath)}</body>
</html>
`.value;
}
