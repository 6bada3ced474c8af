import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Directory settings (README "Directory users"): read from `LDAP_*` variables only when `LDAP_URL`
 * is set, checked all at once so that an operator sees one line per mistake instead of fixing them
 * one restart at a time. Defaults fit OpenLDAP's `inetOrgPerson`; the README gives the Active
 * Directory settings.
 */

export interface DirectoryAttributes {
  /** The stable id: `entryUUID` (RFC 4530), or `objectGUID` on Active Directory. */
  id: string;
  username: string;
  name: string;
  email: string;
  /** `krbPrincipalName` (MIT/FreeIPA) or `userPrincipalName` (Active Directory). */
  kerberosPrincipal: string;
}

export interface DirectoryConfig {
  /** One or more servers, tried in order (failover). */
  urls: readonly string[];
  startTls: boolean;
  /** A PEM file of the CA that signed the servers' certificates (a private CA). */
  caFile: string | undefined;
  bindDn: string;
  bindPassword: string;
  userBaseDn: string;
  /** An LDAP filter holding `{username}`, replaced by the RFC 4515-escaped username. */
  userFilter: string;
  groupBaseDn: string | undefined;
  /** The filter's object class for groups and the attribute that lists members' DNs. */
  groupFilter: string;
  groupMemberAttribute: string;
  /** Active Directory's LDAP_MATCHING_RULE_IN_CHAIN for nested groups; else a bounded walk. */
  matchingRuleInChain: boolean;
  attributes: DirectoryAttributes;
  /** The directory vouches for its addresses: `email_verified` is true for them. */
  emailVerified: boolean;
  /** An extra filter ANDed to the user search: entries it excludes cannot sign in (disabled). */
  enabledFilter: string | undefined;
  /** The bound on every directory operation, connecting included. */
  timeoutMs: number;
}

export interface DirectoryConfigResult {
  config: DirectoryConfig | null;
  problems: readonly string[];
}

const DEFAULT_TIMEOUT_MS = 3000;

type Env = Readonly<Record<string, string | undefined>>;

function setting(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function parseUrls(value: string, problems: string[]): string[] {
  const urls = value.split(/[\s,]+/).filter((url) => url !== '');
  for (const url of urls) {
    if (!/^ldaps?:\/\/[^/\s]+\/?$/i.test(url) || !URL.canParse(url))
      problems.push(`LDAP_URL: "${url}" is not an ldap://host[:port] or ldaps://host[:port] URL`);
  }
  return urls;
}

function parseBoolean(env: Env, name: string, fallback: boolean, problems: string[]): boolean {
  const value = setting(env, name);
  if (value === undefined) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  problems.push(`${name} must be true or false (got ${JSON.stringify(value.slice(0, 20))})`);
  return fallback;
}

/** A filter must at least be one parenthesised expression with balanced parentheses. */
function looksLikeFilter(filter: string): boolean {
  if (!filter.startsWith('(') || !filter.endsWith(')')) return false;
  let depth = 0;
  for (const character of filter.replaceAll('\\(', '').replaceAll('\\)', '')) {
    if (character === '(') depth += 1;
    if (character === ')') depth -= 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

function parseTimeout(env: Env, problems: string[]): number {
  const value = setting(env, 'LDAP_TIMEOUT_MS');
  if (value === undefined) return DEFAULT_TIMEOUT_MS;
  const timeout = Number(value);
  if (!Number.isInteger(timeout) || timeout < 100 || timeout > 60_000) {
    problems.push('LDAP_TIMEOUT_MS must be a whole number of milliseconds between 100 and 60000');
    return DEFAULT_TIMEOUT_MS;
  }
  return timeout;
}

function checkFilters(userFilter: string, enabledFilter: string | undefined, problems: string[]): void {
  if (!userFilter.includes('{username}'))
    problems.push('LDAP_USER_FILTER must contain {username}, e.g. (uid={username})');
  else if (!looksLikeFilter(userFilter))
    problems.push('LDAP_USER_FILTER is not an LDAP filter: it must be one parenthesised expression');
  if (enabledFilter !== undefined && !looksLikeFilter(enabledFilter))
    problems.push('LDAP_ENABLED_FILTER is not an LDAP filter: it must be one parenthesised expression');
}

/**
 * The CA file resolved against the start directory and read now, so that a wrong path is a line at
 * start instead of a failure at the first sign-in.
 */
function parseCaFile(env: Env, baseDirectory: string, problems: string[]): string | undefined {
  const value = setting(env, 'LDAP_CA_FILE');
  if (value === undefined) return undefined;
  const path = resolve(baseDirectory, value);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    problems.push(`LDAP_CA_FILE: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return path;
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----'))
    problems.push(`LDAP_CA_FILE: ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return path;
}

function required(env: Env, name: string, problems: string[], hint: string): string {
  const value = setting(env, name);
  if (value === undefined) problems.push(`${name} is required when LDAP_URL is set (${hint})`);
  return value ?? '';
}

function attributesOf(env: Env): DirectoryAttributes {
  return {
    id: setting(env, 'LDAP_ATTR_ID') ?? 'entryUUID',
    username: setting(env, 'LDAP_ATTR_USERNAME') ?? 'uid',
    name: setting(env, 'LDAP_ATTR_NAME') ?? 'cn',
    email: setting(env, 'LDAP_ATTR_EMAIL') ?? 'mail',
    kerberosPrincipal: setting(env, 'LDAP_ATTR_KERBEROS_PRINCIPAL') ?? 'krbPrincipalName',
  };
}

/**
 * `null` without `LDAP_URL` (directory off); otherwise the settings and every problem found.
 * Relative file names are resolved against `baseDirectory` (the start directory).
 */
export function parseDirectoryConfig(env: Env, baseDirectory = process.cwd()): DirectoryConfigResult {
  const url = setting(env, 'LDAP_URL');
  if (url === undefined) return { config: null, problems: [] };
  const problems: string[] = [];
  const urls = parseUrls(url, problems);
  const startTls = parseBoolean(env, 'LDAP_START_TLS', false, problems);
  if (startTls && urls.some((server) => server.toLowerCase().startsWith('ldaps:')))
    problems.push('LDAP_START_TLS=true upgrades ldap:// connections; ldaps:// URLs are TLS already');
  const bindDn = required(env, 'LDAP_BIND_DN', problems, 'the service account that searches');
  const bindPassword = required(env, 'LDAP_BIND_PASSWORD', problems, 'or LDAP_BIND_PASSWORD_FILE');
  const userBaseDn = required(env, 'LDAP_USER_BASE_DN', problems, 'where users are searched');
  const userFilter = setting(env, 'LDAP_USER_FILTER') ?? '(uid={username})';
  const enabledFilter = setting(env, 'LDAP_ENABLED_FILTER');
  checkFilters(userFilter, enabledFilter, problems);
  const config: DirectoryConfig = {
    urls,
    startTls,
    caFile: parseCaFile(env, baseDirectory, problems),
    bindDn,
    bindPassword,
    userBaseDn,
    userFilter,
    groupBaseDn: setting(env, 'LDAP_GROUP_BASE_DN'),
    groupFilter: setting(env, 'LDAP_GROUP_FILTER') ?? '(objectClass=groupOfNames)',
    groupMemberAttribute: setting(env, 'LDAP_GROUP_MEMBER_ATTRIBUTE') ?? 'member',
    matchingRuleInChain: parseBoolean(env, 'LDAP_MATCHING_RULE_IN_CHAIN', false, problems),
    attributes: attributesOf(env),
    emailVerified: parseBoolean(env, 'LDAP_EMAIL_VERIFIED', false, problems),
    enabledFilter,
    timeoutMs: parseTimeout(env, problems),
  };
  if (!looksLikeFilter(config.groupFilter))
    problems.push('LDAP_GROUP_FILTER is not an LDAP filter: it must be one parenthesised expression');
  return { config: problems.length === 0 ? config : null, problems };
}
