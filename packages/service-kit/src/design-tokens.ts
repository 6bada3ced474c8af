/**
 * The design tokens every page of the three apps shares (auth server, orders /app, the SPA): the
 * palette in light and dark (`prefers-color-scheme`), the focus colour (WCAG 1.4.11), box
 * sizing, the body's colours and system font, the card, the page title, the primary and secondary
 * actions and the focus ring. Each app serves it at the top of its own stylesheet (same origin: the CSP allows only
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
body {
  margin: 0;
  background: var(--bg);
  color: var(--text);
  font:
    16px / 1.5 system-ui,
    -apple-system,
    "Segoe UI",
    Roboto,
    sans-serif;
}
.card {
  background: var(--card);
  border: 1px solid var(--border);
  border-radius: 0.75rem;
}
h1 {
  margin: 0 0 0.5rem;
  font-size: 1.5rem;
  line-height: 1.25;
}
.primary {
  background: var(--accent);
  color: var(--accent-text);
}
.secondary {
  background: transparent;
  color: var(--accent);
}
/* A visible focus ring on every focusable element (WCAG 2.4.7). */
:focus-visible {
  outline: 3px solid var(--focus);
  outline-offset: 2px;
}
`;

/** An app's stylesheet as served: the shared tokens, then the app's own rules. */
export function withDesignTokens(stylesheet: string | Buffer): Buffer {
  return Buffer.from(`${DESIGN_TOKENS_CSS}${stylesheet.toString()}`);
}
