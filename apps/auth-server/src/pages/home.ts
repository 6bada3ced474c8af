import { basename, dirname, join } from 'node:path';
import { ENGLISH_PAGE, type PageLanguage } from '../i18n/translator.js';
import { html } from './html.js';
import { renderPage } from './layout.js';

/** What the landing page may show about the seed; only given in development, never secrets. */
export interface DevelopmentSeedSummary {
  clients: readonly { clientId: string; name: string | undefined; redirectUris: readonly string[] }[];
  usernames: readonly string[];
  /** Where the passwords are (the seed file), so the page can say where to look without showing them. */
  seedFile: string | undefined;
}

export interface HomePageInput {
  issuer: string;
  basePath: string;
  development: DevelopmentSeedSummary | undefined;
  language?: PageLanguage;
}

/**
 * The issuer root: what this service is and where its machine-readable documents live. The
 * development-only section stays English: it is a developer's tool, as the dev mailbox is.
 */
export function renderHomePage(input: HomePageInput): string {
  const language = input.language ?? ENGLISH_PAGE;
  const { t } = language;
  const link = (path: string, label: string) =>
    html`<li><a href="${input.basePath}${path}">${label}</a> <code class="muted">${path}</code></li>`;
  const body = html`<p class="lead">${t.text('home.lead')}</p>
<p class="muted">${t.html('home.issuer', { issuer: input.issuer })}</p>
<p><a class="button" href="${input.basePath}/account" data-action="account">${t.text('home.account')}</a></p>
<h2>${t.text('home.developers')}</h2>
<ul class="links">
${link('/.well-known/openid-configuration', t.text('home.discovery'))}
${link('/jwks', t.text('home.jwks'))}
${link('/health/ready', t.text('home.health'))}
</ul>
${input.development ? renderDevelopmentSeed(input.development, input.basePath) : null}`;
  return renderPage({ title: t.text('home.title'), body, basePath: input.basePath, language });
}

function renderDevelopmentSeed(seed: DevelopmentSeedSummary, _basePath: string) {
  const clients = seed.clients.map((client) => {
    const home = client.redirectUris[0] ? new URL(client.redirectUris[0]).origin : undefined;
    return html`<li><code>${client.clientId}</code>${client.name ? html` (${client.name})` : null}${
      home ? html`: <a href="${home}/">${home}</a>` : null
    }</li>`;
  });
  const users = seed.usernames.map((name) => html`<li><code>${name}</code></li>`);
  return html`<section class="dev-only" aria-labelledby="dev-title">
<h2 id="dev-title">Development only</h2>
<p class="muted">Shown because NODE_ENV=development. Registered clients:</p>
<ul>${clients.length > 0 ? clients : html`<li>none: the seed file registers no client</li>`}</ul>
<p class="muted">Users you can sign in as:</p>
<ul>${users.length > 0 ? users : html`<li>none</li>`}</ul>
${seed.seedFile ? html`<p class="muted">Their passwords are in <code>${passwordFileOf(seed.seedFile)}</code>.</p>` : null}
</section>`;
}

/**
 * Where a demo password is read: `pnpm dev` (scripts/dev.mjs) writes the generated passwords to
 * dev-secrets.json beside its dev-seed.json and its banner names that file, so this page names the
 * same one; any other seed file holds its passwords itself.
 */
function passwordFileOf(seedFile: string): string {
  return basename(seedFile) === 'dev-seed.json' ? join(dirname(seedFile), 'dev-secrets.json') : seedFile;
}
