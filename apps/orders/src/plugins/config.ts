import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
  }
}

export interface ConfigPluginOptions {
  config: AppConfig;
}

/** Exposes the already-parsed configuration; nothing below buildApp reads process.env. */
export const configPlugin = fp<ConfigPluginOptions>(
  async (app, { config }) => {
    app.decorate('config', config);
  },
  { name: 'config', fastify: '5.x' },
);
