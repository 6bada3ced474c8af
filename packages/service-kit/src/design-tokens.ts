/**
 * The design tokens every page of the three apps shares (auth server, orders /app, the SPA): the
 * palette in light and dark (`prefers-color-scheme`), the focus colour (WCAG 1.4.11) and box
 * sizing. Each app serves it at the top of its own stylesheet (same origin: the CSP allows only
 * 'self'), so the apps look like one product and a colour changes in one place. An app may
 * override a token after it (the SPA's accent).
 */
export const DESIGN_TOKENS_CSS = `:root {
  color-scheme: light dark;
  --bg: #f4f5f7;
  --card: #ffffff;
  --text: #1c1e21;
  --muted: #555b66;
  --border: #c9ced6;
  --accent: #1f5fbf;
  --accent-text: #ffffff;
  --danger-bg: #fdecec;
  --danger-text: #8a1414;
  /* 4.7:1 on white, so the focus ring meets WCAG 1.4.11 (3:1) on the card and the page. */
  --focus: #b35c00;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #15171a;
    --card: #1f2226;
    --text: #eceef1;
    --muted: #a9afb9;
    --border: #454b55;
    --accent: #6ea2ff;
    --accent-text: #0b1220;
    --danger-bg: #3b1717;
    --danger-text: #ffb4b4;
    --focus: #f0a000;
  }
}
* {
  box-sizing: border-box;
}
`;

/** An app's stylesheet as served: the shared tokens, then the app's own rules. */
export function withDesignTokens(stylesheet: string | Buffer): Buffer {
  return Buffer.from(`${DESIGN_TOKENS_CSS}${stylesheet.toString()}`);
}
