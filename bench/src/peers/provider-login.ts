/**
 * The oidc-provider peer's login pages, the smallest a production deployment has: GET
 * `/interaction/<uid>` renders a username/password form; its POST checks the one bench account,
 * grants the requested scopes (OIDC and the JWT resource) and finishes the interaction, after which
 * the provider redirects with the code. The harness drives them as it drives ours (src/oauth-flow.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';

export interface LoginSettings {
  user: { username: string; password: string };
  /** Granted at login: the OIDC scopes and the JWT resource's scope. */
  oidcScope: string;
  resource: { id: string; scope: string };
}

const INTERACTION_PATH = /^\/interaction\/([\w-]+)(\/login)?$/;

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function loginPage(uid: string): string {
  return `<!doctype html><title>Sign in</title><form method="post" action="/interaction/${uid}/login">
<input name="username" autocomplete="username"><input name="password" type="password" autocomplete="current-password">
<button type="submit">Sign in</button></form>`;
}

async function finishLogin(
  provider: Provider,
  settings: LoginSettings,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const form = await readForm(request);
  const details = await provider.interactionDetails(request, response);
  const valid =
    sameText(form.get('username') ?? '', settings.user.username) &&
    sameText(form.get('password') ?? '', settings.user.password);
  if (!valid) {
    response.writeHead(401, { 'content-type': 'text/html' }).end(loginPage(details.uid));
    return;
  }
  const accountId = settings.user.username;
  const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
  grant.addOIDCScope(settings.oidcScope);
  grant.addResourceScope(settings.resource.id, settings.resource.scope);
  const grantId = await grant.save();
  await provider.interactionFinished(
    request,
    response,
    { login: { accountId }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

/** Handles the request when it is one of the login pages; false otherwise. */
export async function handleLoginPages(
  provider: Provider,
  settings: LoginSettings,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<boolean> {
  const match = INTERACTION_PATH.exec(request.url ?? '');
  if (!match) return false;
  if (request.method === 'POST' && match[2]) {
    await finishLogin(provider, settings, request, response);
    return true;
  }
  const details = await provider.interactionDetails(request, response);
  response
    .writeHead(200, { 'content-type': 'text/html', 'cache-control': 'no-store' })
    .end(loginPage(details.uid));
  return true;
}
