import { type DatabaseLocation, describeDatabaseLocation } from '@oidc-orders/service-kit';
import fp from 'fastify-plugin';
import { type DatabaseHandle, openDatabase } from '../db/client.js';
import { DatabaseStartError } from '../db/errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    database: DatabaseHandle;
  }
}

export interface DatabasePluginOptions {
  /** An already open database (tests share one per file); otherwise `config.database` is opened. */
  database?: DatabaseHandle | undefined;
}

/**
 * Opens the database, applies the committed migrations, and closes it when the app closes (only
 * when this plugin opened it: a database handed in by the caller belongs to the caller).
 */
function startError(what: string, location: DatabaseLocation, error: unknown): DatabaseStartError {
  const reason = error instanceof Error ? (error.message.split('\n')[0] ?? error.name) : String(error);
  return new DatabaseStartError(`${what} ${describeDatabaseLocation(location)}: ${reason}`, { cause: error });
}

export const databasePlugin = fp<DatabasePluginOptions>(
  async (app, options) => {
    const database =
      options.database ??
      (await openDatabase(app.config.database, {
        // In development (`pnpm dev`) the operator's `users` and `keys` commands reach an embedded
        // database through this process while it runs; in production nothing listens unannounced.
        shareOnLoopback: app.config.nodeEnv === 'development',
        // Message and code only: pg attaches the whole client (with its statements) to the error.
        onIdleConnectionError: (error) =>
          app.log.warn(
            { reason: error.message, code: (error as { code?: unknown }).code },
            'idle database connection failed',
          ),
      }).catch((error: unknown) => {
        throw startError('cannot open', app.config.database, error);
      }));
    if (!options.database) {
      app.addHook('onClose', async () => {
        await database.close();
      });
    }
    try {
      await database.migrate();
      app.log.info({ driver: app.config.database.driver }, 'database ready: migrations applied');
    } catch (error) {
      if (!options.database) await database.close().catch(() => {});
      throw startError('cannot migrate', app.config.database, error);
    }
    app.decorate('database', database);
  },
  { name: 'db', fastify: '5.x', dependencies: ['config'] },
);
