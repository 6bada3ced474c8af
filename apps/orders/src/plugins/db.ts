import fp from 'fastify-plugin';
import { type AppDatabase, type DatabaseHandle, openDatabase } from '../db/client.js';
import { DatabaseUnavailableError } from '../errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: AppDatabase;
    database: DatabaseHandle;
    /**
     * The database for placing orders: every statement is cancelled by PostgreSQL past
     * ORDER_TX_TIMEOUT_MS (`DatabaseHandle.withStatementTimeout`), so an order is one statement.
     */
    orderDb: AppDatabase;
  }
}

export interface DbPluginOptions {
  /**
   * An already opened and migrated database (tests share one per file). The app does not close
   * what it did not open.
   */
  database?: DatabaseHandle;
}

/**
 * Opens the database named by DATABASE_URL, checks it answers `select 1` within
 * DATABASE_CONNECT_TIMEOUT_MS and applies the migrations, all while the app is loading: an
 * unreachable database fails `ready()` (so the start) instead of the first request.
 */
export const databasePlugin = fp<DbPluginOptions>(
  async (app, { database: injected }) => {
    const { config } = app;
    let database = injected;
    if (!database) {
      database = await openDatabase(config.databaseUrl, {
        connectTimeoutMs: config.databaseConnectTimeoutMs,
        // A warning with message and code only: the database restarting is not a fault here, and pg
        // attaches the whole client (with its statements) to the error.
        onIdleConnectionError: (error) =>
          app.log.warn(
            { reason: error.message, code: (error as { code?: unknown }).code },
            'idle database connection failed',
          ),
      }).catch((error: unknown) => {
        throw new DatabaseUnavailableError(`cannot open the database: ${String(error)}`, { cause: error });
      });
      const opened = database;
      try {
        await opened.ping(config.databaseConnectTimeoutMs);
        await opened.migrate();
      } catch (error) {
        await opened.close().catch(() => undefined);
        throw error;
      }
      // onClose runs after the HTTP server has closed and every in-flight request has finished,
      // so no request loses its connection mid-query.
      app.addHook('onClose', async () => {
        app.log.info('closing database connections');
        await opened.close();
      });
      app.log.info({ driver: opened.driver }, 'database connected and migrated');
    } else {
      await database.ping(config.databaseConnectTimeoutMs);
    }
    app.decorate('database', database);
    app.decorate('db', database.db);
    const orderDatabase = database.withStatementTimeout(config.orderTxTimeoutMs);
    app.addHook('onClose', () => orderDatabase.close());
    app.decorate('orderDb', orderDatabase.db);
  },
  { name: 'db', dependencies: ['config'], fastify: '5.x' },
);
