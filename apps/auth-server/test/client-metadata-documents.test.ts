import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GuardedFetchOptions, guardedFetchJson } from '../src/http/guarded-fetch.js';
import { hiddenFields, locationOf, TestBrowser } from './browser.js';
import { FORM, startTestApp, type TestApp } from './helpers/app.js';
import { pkcePair } from './helpers/flows.js';
import { TEST_SECRETS, testSeed } from './helpers/seed.js';

/**
 * Client ID Metadata Documents served from a loopback listener (the listed `http` origin): a full
 * sign-in with consent naming the host, and each attack refused: a document naming another
 * client_id, a host resolving to a private address, a redirect to another host, an oversized
 * document, a slow one.
 */

type Handler = (response: ServerResponse) => void;
const documents = new Map<string, Handler>();
let server: Server;
let origin: string;
let app: TestApp;
let close: () => Promise<void>;

/** What the wildcard origin's hosts resolve to in these tests: a private address. */
const PRIVATE_ANSWER = [{ address: '10.1.2.3', family: 4 }];

beforeAll(async () => {
  server = createServer((request, response) => {
    const handler = documents.get(request.url ?? '');
    if (handler === undefined) return void response.writeHead(404).end();
    handler(response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  ({ app, close } = await startTestApp({
    seed: {
      ...testSeed(),
      client_id_metadata_documents: {
        allowed_origins: [origin, 'https://*.agents.test'],
        scope: 'openid profile orders.read',
      },
    },
    metadataDocumentFetch: { timeoutMs: 1_000, maxBytes: 2_048, resolve: async () => PRIVATE_ANSWER },
  }));
});
afterAll(async () => {
  await close?.();
  await new Promise((resolve) => server?.close(resolve));
});

const json =
  (body: unknown, headers: Record<string, string> = {}): Handler =>
  (response) => {
    response.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

function serveDocument(path: string, overrides: Record<string, unknown> = {}): string {
  const clientId = `${origin}${path}`;
  documents.set(
    path,
    json({
      client_id: clientId,
      client_name: 'Loopback Agent',
      redirect_uris: ['http://127.0.0.1:7777/callback'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: 'none',
      ...overrides,
    }),
  );
  return clientId;
}

function authorizeUrl(clientId: string, challenge: string): string {
  const params = new URLSearchParams({
    client_id: clientId,
    redirect_uri: 'http://127.0.0.1:7777/callback',
    response_type: 'code',
    scope: 'openid orders.read',
    state: 'st',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  return `/authorize?${params}`;
}

/** /authorize → login → consent page (the consent page's response). */
async function signInToConsent(browser: TestBrowser, clientId: string, challenge: string) {
  const login = await browser.follow(await browser.get(authorizeUrl(clientId, challenge)));
  if (!login.body.includes('name="password"')) return login;
  return browser.follow(
    await browser.post(browser.lastUrl, {
      ...hiddenFields(login.body),
      username: 'alice',
      password: TEST_SECRETS.alicePassword,
    }),
  );
}

describe('discovery', () => {
  it('advertises client_id_metadata_document_supported when the seed enables it', async () => {
    const metadata = (await app.inject({ method: 'GET', url: '/.well-known/openid-configuration' })).json();

    expect(metadata.client_id_metadata_document_supported).toBe(true);
  });
});

describe('a client identified by its metadata document', () => {
  it('signs in with consent naming its host, every time, and redeems its code as a public client', async () => {
    const clientId = serveDocument('/agent.json', { client_name: 'Loopback Agent' });
    const browser = new TestBrowser(app);
    const pkce = pkcePair();

    const consent = await signInToConsent(browser, clientId, pkce.challenge);
    expect(consent.body).toContain('Loopback Agent');
    expect(consent.body).toContain(`data-client-host>${new URL(origin).host}<`);
    const approved = await browser.post(browser.lastUrl, {
      ...hiddenFields(consent.body),
      decision: 'approve',
    });
    const code = locationOf(approved).searchParams.get('code') ?? '';
    const token = await app.inject({
      method: 'POST',
      url: '/token',
      headers: FORM,
      payload: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: 'http://127.0.0.1:7777/callback',
        code_verifier: pkce.verifier,
      }).toString(),
    });
    const again = await browser.follow(await browser.get(authorizeUrl(clientId, pkcePair().challenge)));

    expect(token.statusCode).toBe(200);
    expect(token.json().access_token).toEqual(expect.any(String));
    expect(again.body).toContain('name="decision"');
  });

  it('accepts only the redirect URIs of the document, exactly (no loopback port allowance)', async () => {
    const clientId = serveDocument('/exact.json');

    const client = await app.stores.clients.findClient(clientId);

    expect(client?.redirectUris).toEqual(['http://127.0.0.1:7777/callback']);
    const otherPort = authorizeUrl(clientId, pkcePair().challenge).replace('7777', '7778');
    const response = await app.inject({ method: 'GET', url: otherPort });
    expect(response.headers.location ?? '').not.toContain('127.0.0.1:7778');
  });
});

describe('attacks refused', () => {
  it('a document whose client_id differs from its URL', async () => {
    const clientId = serveDocument('/impostor.json', { client_id: `${origin}/someone-else.json` });

    expect(await app.stores.clients.findClient(clientId)).toBeNull();
  });

  it('a document asking for client_credentials', async () => {
    const clientId = serveDocument('/machine.json', { grant_types: ['client_credentials'] });

    expect(await app.stores.clients.findClient(clientId)).toBeNull();
  });

  it('a client id whose host resolves to a private address (wildcard origin, not listed exactly)', async () => {
    expect(await app.stores.clients.findClient('https://app.agents.test/client.json')).toBeNull();
  });

  it('a client id under an origin that is not allowed is no metadata client at all', async () => {
    expect(await app.stores.clients.findClient('https://evil.example/client.json')).toBeNull();
  });
});

describe('the guarded fetch', () => {
  const trusted = (): GuardedFetchOptions => ({ trustedOrigins: [origin], maxBytes: 2_048, timeoutMs: 500 });

  async function reasonOf(url: string, options: GuardedFetchOptions = trusted()): Promise<string> {
    try {
      await guardedFetchJson(url, options);
      return 'fetched';
    } catch (error) {
      return (error as { reason?: string }).reason ?? String(error);
    }
  }

  it('follows a redirect on the same origin, and honours max-age', async () => {
    documents.set('/moved', (response) => response.writeHead(302, { location: '/target' }).end());
    documents.set('/target', json({ ok: true }, { 'cache-control': 'public, max-age=120' }));

    expect(await guardedFetchJson(`${origin}/moved`, trusted())).toEqual({
      body: { ok: true },
      maxAgeSeconds: 120,
    });
  });

  it('refuses a redirect to another host', async () => {
    documents.set('/away', (response) =>
      response.writeHead(302, { location: 'http://127.0.0.2:1/doc' }).end(),
    );

    expect(await reasonOf(`${origin}/away`)).toBe('redirect');
  });

  it('refuses an oversized document, announced or not', async () => {
    documents.set('/big', json({ padding: 'x'.repeat(4_096) }));
    documents.set('/big-chunked', (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"padding":"');
      response.write('x'.repeat(4_096));
      response.end('"}');
    });

    expect(await reasonOf(`${origin}/big`)).toBe('too_large');
    expect(await reasonOf(`${origin}/big-chunked`)).toBe('too_large');
  });

  it('refuses a document that does not arrive in time', async () => {
    documents.set('/slow', (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"slow":');
    });

    expect(await reasonOf(`${origin}/slow`)).toBe('timeout');
  });

  it('refuses plain http and non-public addresses of an origin that is not trusted', async () => {
    const untrusted = { ...trusted(), trustedOrigins: [] };

    expect(await reasonOf(`${origin}/agent.json`, untrusted)).toBe('scheme');
    expect(await reasonOf('https://10.0.0.1/doc.json', untrusted)).toBe('address');
    expect(await reasonOf('https://169.254.169.254/latest', untrusted)).toBe('address');
    expect(
      await reasonOf('https://docs.agents.test/doc.json', {
        ...untrusted,
        resolve: async () => PRIVATE_ANSWER,
      }),
    ).toBe('address');
  });
});
