import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose';
import type Provider from 'oidc-provider';
import type { Configuration } from 'oidc-provider';
import { findFreePort } from './free-port.js';

/**
 * A real upstream OpenID provider for the federation tests: panva's `oidc-provider`, in this
 * process on a loopback port, with one client registered for our callback. Its interaction step
 * (the provider's own login and consent pages, which a person would fill in) is answered by a
 * small handler through the provider's documented interaction API: it signs in `behaviour.account`
 * with the `amr` given, or refuses with `access_denied`. Everything else (authorization endpoint,
 * PKCE, token endpoint, ID tokens, JWKS, RFC 9207 `iss`, back-channel logout) is the library's.
 */
export interface UpstreamAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  /** Claims an Entra-like provider adds. */
  tid?: string;
  oid?: string;
  /** Group names under the usual claim, and under another name a mapping may pick (`groups` scope). */
  groups?: unknown;
  roles?: unknown;
}

export interface UpstreamBehaviour {
  account: UpstreamAccount;
  amr?: string[];
  /** The `acr` of the sign-in (OIDC Core §2), as the provider's login result sets it. */
  acr?: string;
  deny?: boolean;
}

export interface UpstreamProviderFixture {
  issuer: string;
  clientId: string;
  clientSecret: string;
  behaviour: UpstreamBehaviour;
  /**
   * A second registered client that authenticates with `private_key_jwt` (RFC 7523 §2.2): the
   * provider holds the public key, the test writes the private one to a file for our seed.
   */
  keyedClient: { clientId: string; privateKeyPem: string; kid: string };
  /** Replaces the signing key (new `kid`) and restarts on the same port: a key rotation. */
  rotateKey(): Promise<string>;
  currentKid(): string;
  close(): Promise<void>;
}

async function signingKey() {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: `upstream-${randomUUID()}`, alg: 'ES256', use: 'sig' };
}

/** The keyed client's key pair: the private half as PKCS#8 PEM (what `private_key_file` holds). */
async function clientKeyPair() {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `keyed-client-${randomUUID()}`;
  return {
    kid,
    privateKeyPem: await exportPKCS8(privateKey),
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' },
  };
}

function configuration(
  redirectUris: string[],
  backchannelLogoutUri: string | undefined,
  client: { id: string; secret: string },
  keyedClient: { id: string; publicJwk: Record<string, unknown> },
  key: Awaited<ReturnType<typeof signingKey>>,
  behaviour: () => UpstreamBehaviour,
): Configuration {
  return {
    clients: [
      {
        client_id: keyedClient.id,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: 'ES256',
        jwks: { keys: [keyedClient.publicJwk] },
      },
      {
        client_id: client.id,
        client_secret: client.secret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        post_logout_redirect_uris: redirectUris.map((uri) => uri.replace(/\/callback$/, '/signed-out')),
        ...(backchannelLogoutUri
          ? { backchannel_logout_uri: backchannelLogoutUri, backchannel_logout_session_required: true }
          : {}),
      },
    ],
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    jwks: { keys: [key] },
    cookies: { keys: [randomUUID()] },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    // amr and acr with the openid scope: oidc-provider releases a standalone claim only on request.
    claims: {
      auth_time: null,
      sid: null,
      openid: ['sub', 'amr', 'acr'],
      email: ['email', 'email_verified'],
      profile: ['name'],
      entra: ['tid', 'oid'],
      groups: ['groups', 'roles'],
    },
    scopes: ['openid', 'email', 'profile', 'entra', 'groups'],
    features: { devInteractions: { enabled: false }, backchannelLogout: { enabled: true } },
    // The provider refuses special-use addresses for its outgoing calls (SSRF); here our server
    // is a loopback peer on purpose, so its back-channel logout requests go out without that guard.
    fetch: (url, init) => globalThis.fetch(url, { ...init, dispatcher: undefined } as RequestInit),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    async findAccount(_ctx, id) {
      const account = behaviour().account;
      return { accountId: id, claims: () => ({ ...account, sub: id }) };
    },
  };
}

async function answerInteraction(
  provider: Provider,
  behaviour: UpstreamBehaviour,
  req: IncomingMessage,
  res: ServerResponse,
) {
  const details = await provider.interactionDetails(req, res);
  if (behaviour.deny) {
    return provider.interactionFinished(req, res, {
      error: 'access_denied',
      error_description: 'refused by the test',
    });
  }
  if (details.prompt.name === 'login') {
    return provider.interactionFinished(
      req,
      res,
      {
        login: {
          accountId: behaviour.account.sub,
          ...(behaviour.amr ? { amr: behaviour.amr } : {}),
          ...(behaviour.acr ? { acr: behaviour.acr } : {}),
        },
      },
      { mergeWithLastSubmission: false },
    );
  }
  const grant = new provider.Grant({
    accountId: details.session?.accountId ?? '',
    clientId: String(details.params.client_id),
  });
  grant.addOIDCScope(String(details.params.scope));
  return provider.interactionFinished(
    req,
    res,
    { consent: { grantId: await grant.save() } },
    { mergeWithLastSubmission: true },
  );
}

function listen(port: number, provider: Provider, behaviour: () => UpstreamBehaviour): Promise<Server> {
  const callback = provider.callback();
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      answerInteraction(provider, behaviour(), req, res).catch((error: Error) => {
        res.statusCode = 500;
        res.end(error.message);
      });
      return;
    }
    callback(req, res);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

export async function startUpstreamProvider(options: {
  redirectUris: string[];
  /** Where the provider sends logout tokens (OIDC Back-Channel Logout 1.0). */
  backchannelLogoutUri?: string;
  port?: number;
}): Promise<UpstreamProviderFixture> {
  const port = options.port ?? (await findFreePort());
  const issuer = `http://127.0.0.1:${port}`;
  const client = { id: 'federating-server', secret: `upstream-secret-${randomUUID()}` };
  const clientKeys = await clientKeyPair();
  const keyedClient = { id: 'federating-server-keyed', publicJwk: clientKeys.publicJwk };
  let key = await signingKey();
  const fixture = {
    issuer,
    clientId: client.id,
    clientSecret: client.secret,
    keyedClient: { clientId: keyedClient.id, privateKeyPem: clientKeys.privateKeyPem, kid: clientKeys.kid },
    behaviour: { account: { sub: 'upstream-user-1' } } as UpstreamBehaviour,
  };
  const start = async () => {
    // Loaded on first use: the testing entry stays quick to import for the suites that never start it.
    const { default: Provider } = await import('oidc-provider');
    const provider = new Provider(
      issuer,
      configuration(
        options.redirectUris,
        options.backchannelLogoutUri,
        client,
        keyedClient,
        key,
        () => fixture.behaviour,
      ),
    );
    return listen(port, provider, () => fixture.behaviour);
  };
  let server = await start();
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());
  return Object.assign(fixture, {
    async rotateKey() {
      await close();
      key = await signingKey();
      server = await start();
      return key.kid;
    },
    currentKid: () => key.kid,
    close,
  });
}
