import { homedir } from 'node:os';
import { join } from 'node:path';
import { CliError, EXIT } from './errors.js';

/** Where the CLI talks to and where it keeps the session. Flags win over the environment. */
export interface Settings {
  /** The authorization server's issuer URL (discovery is read from it). */
  issuer: URL;
  /** The issuer as an identifier: `issuer` without the `/` that URL adds to an empty path. */
  issuerId: string;
  clientId: string;
  /** Base URL of the orders service (its `GET /orders`). */
  apiUrl: URL;
  /** Holds `tokens.json` (mode 0600) and the refresh lock. */
  configDir: string;
}

export const DEFAULTS = {
  issuer: 'http://localhost:4000',
  clientId: 'orders-cli',
  apiUrl: 'http://localhost:3000',
} as const;

export interface SettingFlags {
  issuer?: string | undefined;
  'client-id'?: string | undefined;
  'api-url'?: string | undefined;
}

type Environment = Readonly<Record<string, string | undefined>>;

const nonEmpty = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

export function resolveSettings(flags: SettingFlags, env: Environment): Settings {
  const issuer = parseHttpUrl(
    'issuer',
    nonEmpty(flags.issuer) ?? nonEmpty(env.ORDERS_ISSUER) ?? DEFAULTS.issuer,
    '--issuer / ORDERS_ISSUER',
  );
  // OIDC Discovery §4.3: the issuer must match exactly; a trailing slash would make it another one.
  if (issuer.search !== '' || issuer.hash !== '') {
    throw new CliError('The issuer URL must not have a query or fragment.', EXIT.usage);
  }
  const apiUrl = parseHttpUrl(
    'API URL',
    nonEmpty(flags['api-url']) ?? nonEmpty(env.ORDERS_API_URL) ?? DEFAULTS.apiUrl,
    '--api-url / ORDERS_API_URL',
  );
  return {
    issuer,
    issuerId: issuerIdOf(issuer),
    clientId: nonEmpty(flags['client-id']) ?? nonEmpty(env.ORDERS_CLIENT_ID) ?? DEFAULTS.clientId,
    apiUrl,
    configDir: configDirectory(env),
  };
}

export function issuerIdOf(issuer: URL): string {
  return issuer.pathname === '/' ? issuer.href.slice(0, -1) : issuer.href;
}

/** `ORDERS_CLI_CONFIG_DIR`, else `$XDG_CONFIG_HOME/orders-cli`, else `~/.config/orders-cli`. */
export function configDirectory(env: Environment): string {
  const explicit = nonEmpty(env.ORDERS_CLI_CONFIG_DIR);
  if (explicit !== undefined) return explicit;
  const xdg = nonEmpty(env.XDG_CONFIG_HOME);
  return join(xdg ?? join(homedir(), '.config'), 'orders-cli');
}

function parseHttpUrl(what: string, value: string, source: string): URL {
  if (!URL.canParse(value))
    throw new CliError(`The ${what} "${value}" (${source}) is not a URL.`, EXIT.usage);
  const url = new URL(value);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CliError(`The ${what} "${value}" (${source}) must be an http(s) URL.`, EXIT.usage);
  }
  if (url.protocol === 'http:' && !isLoopback(url)) {
    // Tokens would travel in clear: plain http only for a server on this machine.
    throw new CliError(
      `The ${what} "${value}" uses http on a host other than this machine; use https.`,
      EXIT.usage,
    );
  }
  return url;
}

export function isLoopback(url: URL): boolean {
  const host = url.hostname;
  return host === 'localhost' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}
