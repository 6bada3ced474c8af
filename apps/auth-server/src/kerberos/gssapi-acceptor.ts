import type { KerberosConfig } from '../config.js';
import { KeytabError, readKeytabPrincipals } from './keytab.js';

/**
 * The server side of SPNEGO (RFC 4559 §4): GSSAPI `gss_accept_sec_context` through the optional
 * `kerberos` package (native bindings to MIT krb5's libgssapi). It is an optional dependency, so
 * `pnpm install` on a machine without libkrb5-dev still succeeds; it is loaded only here, only
 * when KRB5_KTNAME is configured.
 *
 * GSSAPI itself reads the keytab named by the process's KRB5_KTNAME (and the realm setup of
 * KRB5_CONFIG); this module reads the same file first only to name its principals and fail early.
 */

/** What a valid token proved. */
export interface SpnegoAcceptance {
  /** The client principal, `name@REALM`, as GSSAPI displays it. */
  principal: string;
  /** RFC 4559 §5: the server's token for mutual authentication (base64), when GSSAPI made one. */
  mutualToken: string | null;
}

/** A token GSSAPI refused (bad, expired, replayed, wrong service, clock skew); `reason` is GSSAPI's text. */
export class SpnegoRejectedError extends Error {
  constructor(readonly reason: string) {
    super(`SPNEGO token rejected: ${reason}`);
    this.name = 'SpnegoRejectedError';
  }
}

export interface SpnegoAcceptor {
  /** The service principals tickets are accepted for (start-up log, README). */
  readonly servicePrincipals: readonly string[];
  /** Verifies one SPNEGO token (base64, as in `Authorization: Negotiate <token>`). */
  accept(token: string): Promise<SpnegoAcceptance>;
}

/** The slice of the `kerberos` package used here (its own typings may be absent: optional). */
interface KerberosBinding {
  initializeServer(
    service: string,
  ): Promise<{ step(token: string): Promise<unknown>; username: string; response: string }>;
}

/** The package name as a variable, so neither TypeScript nor the bundler needs it present. */
const OPTIONAL_BINDING = 'kerberos';

export const KERBEROS_INSTALL_HINT =
  'install libkrb5-dev, python3, make and g++ (Debian: apt-get install libkrb5-dev build-essential python3), then run pnpm install again';

/** Loads the optional native binding; a missing or unbuilt one is a one-line start-up error. */
export async function loadGssapiBinding(): Promise<KerberosBinding> {
  try {
    const loaded = (await import(OPTIONAL_BINDING)) as { default?: KerberosBinding } & KerberosBinding;
    return loaded.default ?? loaded;
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new KeytabError(
      `KRB5_KTNAME is set but the optional kerberos package could not be loaded (${detail}): ${KERBEROS_INSTALL_HINT}`,
    );
  }
}

/**
 * `HTTP/host@REALM` → GSSAPI's host-based service name `HTTP@host` (RFC 2743 §4.1,
 * GSS_C_NT_HOSTBASED_SERVICE); the realm comes from the keytab entry.
 */
export function hostBasedServiceName(principal: string): string {
  const [service, hostAndRealm = ''] = principal.split('/');
  return `${service}@${hostAndRealm.split('@')[0]}`;
}

function pinnedPrincipalIn(keytabPrincipals: readonly string[], pinned: string): string | null {
  const matches = (candidate: string) =>
    pinned.includes('@') ? candidate === pinned : candidate.startsWith(`${pinned}@`);
  return keytabPrincipals.find(matches) ?? null;
}

/**
 * Reads the keytab, loads the binding and (when pinned) acquires the service's credentials once,
 * so every configuration mistake fails the start rather than the first sign-in.
 */
export async function createSpnegoAcceptor(config: KerberosConfig): Promise<SpnegoAcceptor> {
  const keytabPrincipals = await readKeytabPrincipals(config.keytab);
  let servicePrincipals = keytabPrincipals;
  // An empty service name makes GSSAPI accept a ticket for any key in the keytab.
  let service = '';
  if (config.servicePrincipal !== null) {
    const pinned = pinnedPrincipalIn(keytabPrincipals, config.servicePrincipal);
    if (pinned === null) {
      throw new KeytabError(
        `KERBEROS_SERVICE_PRINCIPAL is invalid: ${config.servicePrincipal} is not in the keytab (it holds ${keytabPrincipals.join(', ')})`,
      );
    }
    servicePrincipals = [pinned];
    service = hostBasedServiceName(pinned);
  }
  const binding = await loadGssapiBinding();
  try {
    await binding.initializeServer(service);
  } catch (error) {
    throw new KeytabError(
      `KRB5_KTNAME is invalid: GSSAPI cannot use the keytab (${(error as Error).message})`,
    );
  }
  return {
    servicePrincipals,
    async accept(token) {
      // A fresh context per request: SPNEGO over HTTP with Kerberos completes in one round trip
      // (RFC 4559 §4.2), so no state is kept between requests or instances.
      const context = await binding.initializeServer(service);
      try {
        await context.step(token);
      } catch (error) {
        throw new SpnegoRejectedError(error instanceof Error ? error.message : String(error));
      }
      return { principal: context.username, mutualToken: context.response || null };
    },
  };
}
