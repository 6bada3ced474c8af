import type { ConnectionOptions } from 'node:tls';
import { inClientSpan, type OperationSpan, type SpanAttributeValue } from '@oidc-orders/service-kit';
import {
  type Change,
  Client,
  type ClientOptions,
  type Control,
  type DN,
  ResultCodeError,
  type SearchOptions,
  type SearchResult,
} from 'ldapts';

/**
 * The LDAP client with a span per operation (ldapts has no OpenTelemetry instrumentation), so a
 * directory sign-in shows where its time went: the service bind, the user search, the user's own
 * bind, the group search. Attributes name the server, the operation and its outcome, never a
 * password, a filter (it holds the username typed) or a user's DN: a bind says which account
 * bound (`service` or `user`), a search its scope, its base only when it is a configured base
 * (a subtree search), and how many entries came back.
 */
export class TracedLdapClient extends Client {
  private readonly server: Record<string, SpanAttributeValue>;

  constructor(
    options: ClientOptions,
    /** The service account's DN (LDAP_BIND_DN): a bind as anyone else is a user's. */
    private readonly serviceDn: string,
  ) {
    super(options);
    const url = new URL(options.url);
    this.server = {
      'server.address': url.hostname,
      'server.port': Number(url.port || (url.protocol === 'ldaps:' ? 636 : 389)),
    };
  }

  override startTLS(options?: ConnectionOptions, controls?: Control | Control[]): Promise<void> {
    return this.traced('starttls', {}, () => super.startTLS(options, controls));
  }

  override bind(dn: DN | string, password?: string, controls?: Control | Control[]): Promise<void> {
    const account = String(dn) === this.serviceDn ? 'service' : 'user';
    return this.traced('bind', { 'ldap.bind.account': account }, () => super.bind(dn, password, controls));
  }

  override search(
    baseDN: DN | string,
    options?: SearchOptions,
    controls?: Control | Control[],
  ): Promise<SearchResult> {
    const scope = options?.scope ?? 'sub';
    const attributes: Record<string, SpanAttributeValue> = { 'ldap.search.scope': scope };
    if (scope !== 'base') attributes['ldap.search.base'] = String(baseDN);
    return this.traced('search', attributes, async (span) => {
      const result = await super.search(baseDN, options, controls);
      span.setAttribute('ldap.search.entries', result.searchEntries.length);
      return result;
    });
  }

  override modify(
    dn: DN | string,
    changes: Change | Change[],
    controls?: Control | Control[],
  ): Promise<void> {
    return this.traced('modify', {}, () => super.modify(dn, changes, controls));
  }

  override exop(oid: string, value?: Buffer | string, controls?: Control | Control[]) {
    return this.traced('exop', { 'ldap.exop.oid': oid }, () => super.exop(oid, value, controls));
  }

  private traced<T>(
    operation: string,
    attributes: Record<string, SpanAttributeValue>,
    work: (span: OperationSpan) => Promise<T>,
  ): Promise<T> {
    return inClientSpan(
      `ldap.${operation}`,
      () => ({ 'ldap.operation.name': operation, ...this.server, ...attributes }),
      async (span) => {
        try {
          return await work(span);
        } catch (error) {
          // RFC 4511 §4.1.9 result code (49 invalidCredentials, 32 noSuchObject…), never the message.
          if (error instanceof ResultCodeError) span.setAttribute('ldap.result_code', error.code);
          throw error;
        }
      },
    );
  }
}
