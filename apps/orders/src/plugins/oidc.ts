import fp from 'fastify-plugin';
import { type DiscoveryRetryOptions, OidcProvider } from '../oidc/provider.js';

declare module 'fastify' {
  interface FastifyInstance {
    oidc: OidcProvider;
  }
}

export interface OidcPluginOptions {
  /** Test seam: backoff of the background discovery retries. */
  discoveryRetry?: DiscoveryRetryOptions;
}

/**
 * The authorization server's metadata, read once while the app loads. An unreachable server does
 * not fail the start (the API-key routes do not need it): discovery is retried in the background.
 */
export const oidcPlugin = fp<OidcPluginOptions>(
  async (app, options) => {
    const { config } = app;
    const { oidc } = config;
    const provider = new OidcProvider(
      oidc.issuer === undefined
        ? undefined
        : {
            issuer: oidc.issuer,
            clientId: oidc.clientId!,
            clientSecret: oidc.clientSecret,
            resourceId: config.resourceId,
            resourceSecret: config.resourceSecret,
            allowInsecureRequests: oidc.allowInsecureRequests,
            httpTimeoutMs: oidc.httpTimeoutMs,
          },
      app.log,
      options.discoveryRetry,
    );
    app.decorate('oidc', provider);
    app.addHook('onClose', async () => provider.close());
    await provider.start();
  },
  { name: 'oidc', dependencies: ['config'], fastify: '5.x' },
);
