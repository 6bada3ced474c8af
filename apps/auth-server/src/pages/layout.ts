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
}

/** The shared document shell: one stylesheet, no inline script or style, a labelled main region. */
export function renderPage(frame: PageFrame): string {
  const scripts = (frame.scripts ?? []).map(
    (name) => html`<script src="${frame.basePath}/assets/${name}" defer></script>`,
  );
  return html`<!doctype html>
<html lang="en">
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
</body>
</html>
`.value;
}
