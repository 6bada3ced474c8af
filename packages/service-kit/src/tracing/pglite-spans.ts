import type { PGlite, Transaction } from '@electric-sql/pglite';
import { inClientSpan } from './active-span.js';

/**
 * PGlite, the embedded database `pnpm dev` runs on, has no OpenTelemetry instrumentation; its
 * statements get spans like those of the pg instrumentation on PostgreSQL: inside a request only,
 * with the statement text and its `$n` placeholders, never the bound values. Drizzle reaches the
 * database through `query` (and `transaction`, whose statements go through the transaction's own
 * `query`), so those are the methods wrapped.
 */
export function withStatementSpans(client: PGlite): PGlite {
  return wrapQueries(client, (target) => ({
    transaction: <T>(work: (tx: Transaction) => Promise<T>) =>
      target.transaction((tx) => work(wrapQueries(tx, () => ({})))),
  }));
}

type Queryable = Pick<PGlite, 'query'>;

function wrapQueries<T extends Queryable>(target: T, extra: (target: T) => Record<string, unknown>): T {
  const overrides: Record<string | symbol, unknown> = {
    ...extra(target),
    query: (statement: string, params?: unknown[], options?: unknown) =>
      inClientSpan(
        `pglite.query:${operationOf(statement)}`,
        () => statementAttributes(statement),
        async (span) => {
          const result = await target.query(statement, params, options as never);
          span.setAttribute('db.response.returned_rows', result.rows.length);
          return result;
        },
      ),
  };
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      const value = Reflect.get(object, property, object);
      // PGlite's methods use private fields: they must run on the instance, never on the proxy.
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

/** `SELECT`, `INSERT`, … the statement's first keyword, as the span name's suffix. */
function operationOf(statement: string): string {
  return /^\s*(?:with\b[\s\S]*?\)\s*)?([a-z]+)/i.exec(statement)?.[1]?.toUpperCase() ?? 'QUERY';
}

function statementAttributes(statement: string): Record<string, string> {
  return {
    // PGlite is PostgreSQL compiled to WebAssembly: the same system name, so one search finds the
    // statements on either database.
    'db.system.name': 'postgresql',
    'db.client.driver': 'pglite',
    'db.operation.name': operationOf(statement),
    'db.query.text': statement,
  };
}
