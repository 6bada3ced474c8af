import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { PAGES } from '../endpoints.js';
import type { StoredMail } from '../mail/mailer.js';
import { html } from '../pages/html.js';
import { renderPage } from '../pages/layout.js';
import { sendHtml } from '../pages/respond.js';

export interface DevMailboxRoutesOptions {
  directory: string;
  basePath: string;
}

const MAIL_ID = /^[A-Za-z0-9-]{1,80}$/;

async function readMailbox(directory: string): Promise<StoredMail[]> {
  const names = await readdir(directory).catch(() => [] as string[]);
  const files = names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .reverse();
  return Promise.all(
    files.map(async (name) => JSON.parse(await readFile(join(directory, name), 'utf8')) as StoredMail),
  );
}

/** The text part with its URLs as links, so a person can follow the mailed link in the browser. */
function linkedText(text: string) {
  return text
    .split(/(https?:\/\/\S+)/)
    .map((part, index) => (index % 2 === 1 ? html`<a href="${part}">${part}</a>` : part));
}

/**
 * The dev mailbox (development without SMTP_URL; never registered in production): the mails kept
 * as files, newest first, each readable as its text part.
 */
export const devMailboxRoutes: FastifyPluginAsync<DevMailboxRoutesOptions> = async (app, options) => {
  const { directory, basePath } = options;

  app.get(PAGES.devMailbox.path, async (_request, reply) => {
    const mails = await readMailbox(directory);
    const rows = mails.map(
      (mail) =>
        html`<li><a href="${basePath}/dev/mailbox/${mail.id}">${mail.subject}</a> to ${mail.to}, ${mail.date}</li>`,
    );
    const body = html`<p class="lead">Development only: the mails this server would have sent, kept in <code>${directory}</code>.</p>
${mails.length === 0 ? html`<p>No mail yet.</p>` : html`<ul class="stack">${rows}</ul>`}`;
    return sendHtml(reply, 200, renderPage({ title: 'Dev mailbox', body, basePath }));
  });

  app.get<{ Params: { id: string } }>(`${PAGES.devMailbox.path}/:id`, async (request, reply) => {
    const { id } = request.params;
    const mail = MAIL_ID.test(id)
      ? (await readMailbox(directory)).find((stored) => stored.id === id)
      : undefined;
    if (!mail)
      return sendHtml(
        reply,
        404,
        renderPage({
          title: 'No such mail',
          body: html`<p><a href="${basePath}/dev/mailbox">Back to the dev mailbox</a></p>`,
          basePath,
        }),
      );
    const body = html`<p>From ${mail.from} to ${mail.to}, ${mail.date}</p>
<pre class="mail-text">${linkedText(mail.text)}</pre>
<p><a href="${basePath}/dev/mailbox">Back to the dev mailbox</a></p>`;
    return sendHtml(reply, 200, renderPage({ title: mail.subject, body, basePath }));
  });
};
