import {
  findFreePort,
  startUpstreamProvider,
  type UpstreamProviderFixture,
} from '@oidc-orders/service-kit/testing';
import { createUpstreamClients } from '../../src/federation/upstream-client.js';
import type { SeedDocument } from '../../src/schemas/seed.js';
import { startTestApp } from './app.js';

/** A seed `identity_providers` entry for the fixture provider, under our id `id`. */
export function upstreamProviderEntry(
  upstream: Pick<UpstreamProviderFixture, 'clientId' | 'clientSecret'>,
  id: string,
  issuer: string,
  extra: Record<string, unknown> = {},
) {
  return {
    id,
    issuer,
    client_id: upstream.clientId,
    client_secret: upstream.clientSecret,
    scope: 'openid email profile',
    display_name: `Provider ${id}`,
    ...extra,
  };
}

/**
 * The real upstream provider (./upstream-provider.ts) with callbacks for `providerIds`, and our app
 * listening on a loopback port with the seed `seedOf` builds from the upstream (test/federation*.test.ts).
 */
export async function startFederatedApp(options: {
  providerIds: string[];
  seedOf(upstream: UpstreamProviderFixture): SeedDocument;
}) {
  const port = await findFreePort();
  const issuer = `http://127.0.0.1:${port}`;
  const upstream = await startUpstreamProvider({
    redirectUris: options.providerIds.map((id) => `${issuer}/idp/${id}/callback`),
  });
  const started = await startTestApp({
    env: { ISSUER: issuer },
    seed: options.seedOf(upstream),
    upstreamClients: createUpstreamClients(1),
  });
  await started.app.listen({ port, host: '127.0.0.1' });
  return {
    issuer,
    upstream,
    started,
    async close() {
      await started.close();
      await upstream.close();
    },
  };
}
