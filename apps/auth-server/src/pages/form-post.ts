import { html } from './html.js';
import { renderPage } from './layout.js';

export interface FormPostPageInput {
  /** The validated redirect URI of the client. */
  action: string;
  fields: Readonly<Record<string, string>>;
  basePath: string;
}

/**
 * OAuth 2.0 Form Post Response Mode §2: the response parameters as hidden fields of a form that
 * POSTs to the redirect URI. The CSP forbids inline script, so `/assets/form-post.js` submits the
 * form on load; the visible button covers browsers without JavaScript.
 */
export function renderFormPostPage(input: FormPostPageInput): string {
  const fields = Object.entries(input.fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  );
  const body = html`<p>Returning you to the application…</p>
<form method="post" action="${input.action}" id="form-post-response">
${fields}
<button type="submit" class="primary">Continue</button>
</form>`;
  return renderPage({ title: 'Continue', body, basePath: input.basePath, scripts: ['form-post.js'] });
}
