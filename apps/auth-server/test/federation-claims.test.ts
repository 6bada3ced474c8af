import type { UpstreamBehaviour, UpstreamProviderFixture } from '@oidc-orders/service-kit/testing';
import { eq } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locallyOwned } from '../src/accounts/claim-ownership.js';
import { users } from '../src/db/schema.js';
import type { SeedDocument } from '../src/schemas/seed.js';
import { startFederatedApp, upstreamProviderEntry } from './helpers/federation-app.js';
import { type FlowClient, federationFlows, hidden } from './helpers/federation-flow.js';
import { ORDERS_API, REQUIRE_MFA_CLIENT, requireMfaClientEntry } from './helpers/seed.js';
import { ALICE, CONSENTING, signInSeed } from './sign-in-fixtures.js';

/**
 * The claims an upstream OpenID provider speaks for (README "Upstream identity providers"): its
 * mapped `groups` stored and issued like a directory's, each profile claim owned by one source so
 * a later sign-in rewrites only the upstream's, and its `acr` issued only when it is trusted.
 * Against the real `oidc-provider` fixture and our app listening on a loopback port.
 */

const GROUPS_APP = { ...CONSENTING, scope: 'openid profile email groups orders.read' };
const MFA_APP = { ...REQUIRE_MFA_CLIENT, scope: 'openid profile' };
const PROVIDER_SCOPE = 'openid email profile groups';

function claimsSeed(upstream: UpstreamProviderFixture): SeedDocument {
  const seed = signInSeed();
  return {
    ...seed,
    clients: [
      ...(seed.clients ?? []).map((client) =>
        client.client_id === CONSENTING.clientId ? { ...client, scope: `${client.scope} groups` } : client,
      ),
      requireMfaClientEntry(),
    ],
    resources: (seed.resources ?? []).map((resource) =>
      resource.id === ORDERS_API ? { ...resource, claims: ['email', 'groups'] } : resource,
    ),
    identity_providers: [
      upstreamProviderEntry(upstream, 'trusted', upstream.issuer, {
        scope: PROVIDER_SCOPE,
        trust_upstream_mfa: true,
      }),
      // Groups mapped from another claim name; e-mail links offered (an existing account's address).
      upstreamProviderEntry(upstream, 'plain', upstream.issuer, {
        scope: PROVIDER_SCOPE,
        link_by_verified_email: true,
        claims: { groups: 'roles' },
      }),
    ],
  } as SeedDocument;
}

let servers: Awaited<ReturnType<typeof startFederatedApp>>;
beforeAll(async () => {
  servers = await startFederatedApp({ providerIds: ['trusted', 'plain'], seedOf: claimsSeed });
});
afterAll(async () => {
  await servers?.close();
});

const { signInWithTokens, toLinkPage, finish } = federationFlows(() => servers);

async function signIn(behaviour: UpstreamBehaviour, id = 'trusted', app: FlowClient = GROUPS_APP) {
  servers.upstream.behaviour = behaviour;
  const tokens = await signInWithTokens(app, id);
  return { tokens, claims: tokens.claims()! };
}

const userRow = async (sub: string) => {
  const [row] = await servers.started.database.handle.db.select().from(users).where(eq(users.sub, sub));
  return row!;
};

describe('groups from the upstream', () => {
  it('are issued in the ID token, UserInfo (groups scope) and the token of a resource listing groups', async () => {
    const { tokens, claims } = await signIn({
      account: { sub: 'grouped', name: 'Grouped', groups: ['staff', 'admins'] },
    });
    expect(claims.groups).toEqual(['staff', 'admins']);
    expect(decodeJwt(tokens.access_token).groups).toEqual(['staff', 'admins']);
    const userInfo = await fetch(`${servers.issuer}/userinfo`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userInfo.status).toBe(200);
    expect(((await userInfo.json()) as { groups?: unknown }).groups).toEqual(['staff', 'admins']);
  });

  it('are read from the claim the provider maps, entries that are not names dropped', async () => {
    const { claims } = await signIn(
      { account: { sub: 'mapped', groups: ['ignored'], roles: ['readers', 42, '', 'x'.repeat(300)] } },
      'plain',
    );
    expect(claims.groups).toEqual(['readers']);
  });
});

describe('a later sign-in', () => {
  it('updates the name and groups the upstream owns, and clears its groups when it sends none', async () => {
    const first = await signIn({ account: { sub: 'changing', name: 'Before', groups: ['old'] } });
    const later = await signIn({ account: { sub: 'changing', name: 'After', groups: ['new', 'more'] } });
    expect(later.claims.sub).toBe(first.claims.sub);
    expect(later.claims.name).toBe('After');
    expect(later.claims.groups).toEqual(['new', 'more']);
    expect((await userRow(first.claims.sub)).claimSources).toEqual({
      name: 'idp:trusted',
      email: 'idp:trusted',
      groups: 'idp:trusted',
    });
    await signIn({ account: { sub: 'changing', name: 'After' } });
    expect((await userRow(first.claims.sub)).groups).toBeNull();
  });

  it('keeps an e-mail address changed here, while the claims the upstream owns still update', async () => {
    const account = { sub: 'local-mail', name: 'Mail', email: 'upstream@example.test', email_verified: true };
    const { claims } = await signIn({ account });
    // What the account page's confirmed change writes (src/mail/email-change.ts).
    await servers.started.database.handle.db
      .update(users)
      .set({ email: 'mine@example.test', emailVerified: true, claimSources: locallyOwned('email') })
      .where(eq(users.sub, claims.sub));
    const later = await signIn({
      account: { ...account, name: 'Mail, renamed', email: 'changed-upstream@example.test' },
    });
    expect(later.claims.email).toBe('mine@example.test');
    expect(later.claims.name).toBe('Mail, renamed');
    expect((await userRow(claims.sub)).claimSources).toMatchObject({ email: 'local', name: 'idp:trusted' });
  });
});

describe('a local account linked to a provider', () => {
  it('keeps its own name, gets the groups it lacked from the upstream, and the link by password gives amr fed and pwd', async () => {
    const account = {
      sub: 'alice-upstream',
      email: 'alice@example.test',
      email_verified: true,
      name: 'Upstream Alice',
      roles: ['finance'],
    };
    const { browser, flow, response } = await toLinkPage('plain', account, GROUPS_APP);
    const page = await response.text();
    const action = new URL(/action="([^"]+)"/.exec(page)![1]!, servers.issuer);
    const linked = await browser.request(action, {
      method: 'POST',
      form: { ...hidden(page), password: ALICE.password },
    });
    const linkedClaims = await finish(browser, linked, flow);
    expect(linkedClaims.sub).toBe(ALICE.sub);
    expect(linkedClaims.amr).toEqual(expect.arrayContaining(['fed', 'pwd']));

    const { claims } = await signIn({ account }, 'plain');
    expect(claims.sub).toBe(ALICE.sub);
    expect(claims.name).toBe('Alice Example');
    expect(claims.email).toBe('alice@example.test');
    expect(claims.groups).toEqual(['finance']);
    expect((await userRow(ALICE.sub)).claimSources).toEqual({ groups: 'idp:plain' });
  });
});

describe('acr', () => {
  const UPSTREAM_ACR = 'urn:example:upstream:loa-2';

  it('is the upstream’s when the provider is trusted, and ours when it is not', async () => {
    const trusted = await signIn({ account: { sub: 'acr-person' }, acr: UPSTREAM_ACR, amr: ['pwd'] });
    expect(trusted.claims.acr).toBe(UPSTREAM_ACR);
    const untrusted = await signIn({ account: { sub: 'acr-person' }, acr: UPSTREAM_ACR }, 'plain');
    expect(untrusted.claims.acr).toBe('urn:oidc-orders:acr:password');
  });

  it('is ours for a require_mfa client satisfied by the trusted upstream’s MFA (the level it asked for)', async () => {
    const { claims } = await signIn(
      { account: { sub: 'acr-mfa-person' }, acr: UPSTREAM_ACR, amr: ['pwd', 'otp'] },
      'trusted',
      MFA_APP,
    );
    expect(claims.acr).toBe('urn:oidc-orders:acr:mfa');
    expect(claims.amr).toEqual(expect.arrayContaining(['fed', 'otp', 'mfa']));
  });
});
