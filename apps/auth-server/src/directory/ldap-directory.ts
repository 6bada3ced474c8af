import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import {
  Attribute,
  BerWriter,
  Change,
  type Client,
  type Entry,
  Filter,
  InvalidCredentialsError,
  PasswordPolicyControl,
  ResultCodeError,
} from 'ldapts';
import { activeDirectoryRefusal, mustChangeAfterBind, passwordPolicyRefusal } from './bind-outcomes.js';
import type { DirectoryConfig } from './config.js';
import { createGroupReader } from './groups.js';
import { decodeObjectGuid, encodeObjectGuid } from './object-guid.js';
import { createServiceBindGuard } from './service-bind-guard.js';
import { TracedLdapClient } from './traced-ldap-client.js';
import type {
  Directory,
  DirectoryBindOutcome,
  DirectoryEntry,
  DirectoryLookup,
  PasswordChangeOutcome,
} from './types.js';

/**
 * The directory over LDAP with `ldapts`. Each operation opens its own connection (to the first
 * server of `LDAP_URL` that answers), so a server that went away and came back needs no pool repair,
 * and a broken connection is never reused. Every step is bounded by `LDAP_TIMEOUT_MS`.
 */

/** Not a refusal: the directory could not be asked (down, slow, TLS refused, service bind failing). */
class DirectoryUnavailable extends Error {}

export interface DirectoryLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Active Directory keeps the stable id in the binary `objectGUID`; OpenLDAP in `entryUUID` (RFC 4530). */
const isObjectGuid = (attribute: string) => attribute.toLowerCase() === 'objectguid';

function first(value: Entry[string] | undefined): string | null {
  const single = Array.isArray(value) ? value[0] : value;
  if (single === undefined) return null;
  return Buffer.isBuffer(single) ? single.toString('utf8') : String(single);
}

function tlsOptions(config: DirectoryConfig): ConnectionOptions {
  return config.caFile
    ? { ca: readFileSync(config.caFile), minVersion: 'TLSv1.2' }
    : { minVersion: 'TLSv1.2' };
}

/** How long a server that failed to answer is tried after the others. */
const FAILED_SERVER_PAUSE_MS = 30_000;

/**
 * The order in which `LDAP_URL`'s servers are tried: as configured, except that a server that just
 * failed goes last for a while, so that a hanging first server does not cost every sign-in the
 * whole timeout. It is still tried when all the others fail, and goes back in place once it answers.
 */
export function createServerOrder(urls: readonly string[], now: () => number = Date.now) {
  const failedUntil = new Map<string, number>();
  const isResting = (url: string) => (failedUntil.get(url) ?? 0) > now();
  return {
    inOrder: (): string[] => [
      ...urls.filter((url) => !isResting(url)),
      ...urls.filter((url) => isResting(url)),
    ],
    failed: (url: string) => failedUntil.set(url, now() + FAILED_SERVER_PAUSE_MS),
    answered: (url: string) => failedUntil.delete(url),
  };
}

/** RFC 4515 §3: `*`, `(`, `)`, `\` and NUL are escaped; the username never becomes filter syntax. */
export function userFilterFor(template: string, username: string): string {
  return template.replaceAll('{username}', Filter.escape(username));
}

export function createLdapDirectory(config: DirectoryConfig, log: DirectoryLog): Directory {
  const attributes = config.attributes;
  const objectGuid = isObjectGuid(attributes.id);
  const tls = tlsOptions(config);
  const serviceBind = createServiceBindGuard();
  const servers = createServerOrder(config.urls);
  const requested = [
    attributes.id,
    attributes.username,
    attributes.name,
    attributes.email,
    attributes.kerberosPrincipal,
  ];

  /**
   * Runs `work` on a fresh connection to the first server that answers (failover in `LDAP_URL`
   * order). An LDAP result (a refusal, say) is the server's answer and is not retried elsewhere;
   * only a connection that fails or times out moves on to the next server.
   */
  async function onServer<T>(work: (client: Client) => Promise<T>): Promise<T> {
    let lastError: unknown;
    for (const url of servers.inOrder()) {
      // ldapts speaks TLS from the first byte whenever tlsOptions is given: only for ldaps://.
      const implicitTls = url.toLowerCase().startsWith('ldaps:');
      const client = new TracedLdapClient(
        {
          url,
          timeout: config.timeoutMs,
          connectTimeout: config.timeoutMs,
          ...(implicitTls ? { tlsOptions: tls } : {}),
        },
        config.bindDn,
      );
      try {
        if (config.startTls) await client.startTLS(tls);
        const result = await work(client);
        servers.answered(url);
        return result;
      } catch (error) {
        if (error instanceof ResultCodeError || error instanceof DirectoryUnavailable) throw error;
        servers.failed(url);
        lastError = error;
        log.warn({ ldap_server: url, reason: (error as Error).message }, 'directory: server not reachable');
      } finally {
        await client.unbind().catch(() => undefined);
      }
    }
    throw new DirectoryUnavailable(`no directory server answered: ${(lastError as Error)?.message}`);
  }

  /** Runs `work` bound as the service account; backs off after refused binds (no lockout of it). */
  async function asService<T>(work: (client: Client) => Promise<T>): Promise<T> {
    if (!serviceBind.mayBind()) throw new DirectoryUnavailable('service account bind is backing off');
    return await onServer(async (client) => {
      try {
        await client.bind(config.bindDn, config.bindPassword);
        serviceBind.succeeded();
      } catch (error) {
        if (!(error instanceof InvalidCredentialsError)) throw error;
        const pauseSeconds = serviceBind.failed();
        log.warn({ pause_seconds: pauseSeconds }, 'directory: LDAP_BIND_DN / LDAP_BIND_PASSWORD refused');
        throw new DirectoryUnavailable('service account bind refused');
      }
      return await work(client);
    });
  }

  const groups = createGroupReader(config);

  function stableIdOf(entry: Entry): string | null {
    const value = entry[attributes.id];
    if (!objectGuid) return first(value);
    const bytes = Array.isArray(value) ? value[0] : value;
    return Buffer.isBuffer(bytes) ? decodeObjectGuid(bytes) : null;
  }

  async function toEntry(client: Client, raw: Entry): Promise<DirectoryEntry | null> {
    const stableId = stableIdOf(raw);
    const username = first(raw[attributes.username]);
    if (stableId === null || username === null) return null;
    return {
      stableId,
      dn: raw.dn,
      username,
      name: first(raw[attributes.name]),
      email: first(raw[attributes.email]),
      emailVerified: config.emailVerified && first(raw[attributes.email]) !== null,
      groups: await groups.namesOf(client, raw.dn),
      kerberosPrincipal: first(raw[attributes.kerberosPrincipal]),
    };
  }

  /** Entries matching `filter` (ANDed with the enabled filter when `enabledOnly`), at most `limit`. */
  async function find(client: Client, filter: string, enabledOnly: boolean, limit: number): Promise<Entry[]> {
    const effective = enabledOnly && config.enabledFilter ? `(&${filter}${config.enabledFilter})` : filter;
    const { searchEntries } = await client.search(config.userBaseDn, {
      scope: 'sub',
      filter: effective,
      attributes: requested,
      sizeLimit: limit,
      explicitBufferAttributes: objectGuid ? [attributes.id] : [],
    });
    return searchEntries;
  }

  async function lookup(filter: string): Promise<DirectoryLookup> {
    try {
      return await asService(async (client) => {
        const found = await find(client, filter, true, 2);
        return found.length === 1 && found[0] ? await toEntry(client, found[0]) : null;
      });
    } catch (error) {
      if (error instanceof DirectoryUnavailable || error instanceof ResultCodeError) return 'unavailable';
      throw error;
    }
  }

  /** Whether the entry passes `LDAP_ENABLED_FILTER` (a base search of its own DN). */
  async function isEnabled(client: Client, dn: string): Promise<boolean> {
    if (!config.enabledFilter) return true;
    const { searchEntries } = await client.search(dn, {
      scope: 'base',
      filter: config.enabledFilter,
      attributes: ['1.1'],
    });
    return searchEntries.length === 1;
  }

  function idFilter(stableId: string): string | null {
    if (!objectGuid) return `(${attributes.id}=${Filter.escape(stableId)})`;
    const bytes = encodeObjectGuid(stableId);
    return bytes === null ? null : `(${attributes.id}=${Filter.escape(Buffer.from(bytes))})`;
  }

  /** Binds as the entry found by the service account (its DN from the search, never from input). */
  async function bindAs(
    dn: string,
    password: string,
  ): Promise<{ refusal: DirectoryBindOutcome | null; policy: PasswordPolicyControl }> {
    const policy = new PasswordPolicyControl();
    try {
      await onServer((client) => client.bind(dn, password, policy));
      if (mustChangeAfterBind(policy.value))
        return { refusal: { kind: 'must_change_password', canChange: true }, policy };
      return { refusal: null, policy };
    } catch (error) {
      if (!(error instanceof InvalidCredentialsError)) throw error;
      const refusal = activeDirectoryRefusal(error.message) ?? passwordPolicyRefusal(policy.value);
      return { refusal: refusal ?? { kind: 'invalid_credentials' }, policy };
    }
  }

  async function authenticate(username: string, password: string): Promise<DirectoryBindOutcome> {
    // RFC 4513 §5.1.2: a simple bind with an empty password is an unauthenticated bind that
    // succeeds on many servers; it must never count as a sign-in.
    if (username === '' || password === '') return { kind: 'invalid_credentials' };
    try {
      const found = await asService(async (client) => {
        const matches = await find(client, userFilterFor(config.userFilter, username), false, 2);
        if (matches.length !== 1 || !matches[0]) return null;
        const enabled = await isEnabled(client, matches[0].dn);
        return { raw: matches[0], enabled, entry: await toEntry(client, matches[0]) };
      });
      if (found === null || found.entry === null) return { kind: 'invalid_credentials' };
      const { refusal, policy } = await bindAs(found.raw.dn, password);
      if (refusal?.kind === 'invalid_credentials') return { ...refusal, stableId: found.entry.stableId };
      if (refusal) return refusal;
      if (!found.enabled) return { kind: 'account_disabled' };
      return {
        kind: 'ok',
        entry: found.entry,
        ...(policy.value?.graceAuthNsRemaining !== undefined
          ? { graceLoginsLeft: policy.value.graceAuthNsRemaining }
          : {}),
        ...(policy.value?.timeBeforeExpiration !== undefined
          ? { passwordExpiresInSeconds: policy.value.timeBeforeExpiration }
          : {}),
      };
    } catch (error) {
      if (error instanceof DirectoryUnavailable || error instanceof ResultCodeError)
        return { kind: 'unavailable' };
      throw error;
    }
  }

  return {
    authenticate,
    lookupByStableId: async (stableId) => {
      const filter = idFilter(stableId);
      return filter === null ? null : await lookup(filter);
    },
    lookupByUsername: (username) => lookup(userFilterFor(config.userFilter, username)),
    lookupByKerberosPrincipal: (principal) =>
      lookup(`(${attributes.kerberosPrincipal}=${Filter.escape(principal)})`),
    list: async (limit) => {
      try {
        return await asService(async (client) => {
          const found = await find(client, `(${attributes.username}=*)`, false, limit);
          const entries = await Promise.all(found.map((raw) => toEntry(client, raw)));
          return entries.filter((entry): entry is DirectoryEntry => entry !== null);
        });
      } catch (error) {
        if (error instanceof DirectoryUnavailable || error instanceof ResultCodeError) return 'unavailable';
        throw error;
      }
    },
    changePassword: (username, oldPassword, newPassword) =>
      changePassword({ username, oldPassword, newPassword }),
    close: async () => undefined,
  };

  async function changePassword(change: {
    username: string;
    oldPassword: string;
    newPassword: string;
  }): Promise<PasswordChangeOutcome> {
    if (change.oldPassword === '' || change.newPassword === '')
      return { kind: 'refused', reason: 'invalid_credentials' };
    try {
      const found = await asService((client) =>
        find(client, userFilterFor(config.userFilter, change.username), false, 2),
      );
      if (found.length !== 1 || !found[0]) return { kind: 'refused', reason: 'invalid_credentials' };
      const dn = found[0].dn;
      return objectGuid
        ? await changeActiveDirectoryPassword(dn, change)
        : await changeOwnPassword(dn, change);
    } catch (error) {
      if (error instanceof DirectoryUnavailable || error instanceof ResultCodeError)
        return { kind: 'unavailable' };
      throw error;
    }
  }

  /**
   * OpenLDAP: bind as the user with the old password (allowed after an administrator's reset or
   * during grace logins), then the Password Modify extended operation (RFC 3062) rather than a
   * plain modify of `userPassword`: the server hashes the new password itself (`password-hash`),
   * where a modify would store it as sent unless the policy hashes clear text. The policy control
   * names a quality refusal.
   */
  async function changeOwnPassword(
    dn: string,
    change: { oldPassword: string; newPassword: string },
  ): Promise<PasswordChangeOutcome> {
    const policy = new PasswordPolicyControl();
    return await onServer(async (client) => {
      try {
        await client.bind(dn, change.oldPassword);
      } catch (error) {
        if (error instanceof InvalidCredentialsError)
          return { kind: 'refused', reason: 'invalid_credentials' } as const;
        throw error;
      }
      try {
        await client.exop(PASSWORD_MODIFY_OID, passwordModifyRequest(dn, change), policy);
        return { kind: 'changed' } as const;
      } catch (error) {
        if (!(error instanceof ResultCodeError)) throw error;
        return { kind: 'refused', reason: 'policy', message: policyMessage(policy.value?.error) } as const;
      }
    });
  }

  /**
   * Active Directory: a change (not a reset) is a delete of the old `unicodePwd` and an add of the
   * new one in one modify, each the quoted password in UTF-16LE (MS-ADTS §3.1.1.3.1.5.2); it needs
   * an encrypted connection, and works while the password is expired.
   */
  async function changeActiveDirectoryPassword(
    dn: string,
    change: { oldPassword: string; newPassword: string },
  ): Promise<PasswordChangeOutcome> {
    const encode = (password: string) => Buffer.from(`"${password}"`, 'utf16le');
    try {
      await asService((client) =>
        client.modify(dn, [
          new Change({
            operation: 'delete',
            modification: new Attribute({ type: 'unicodePwd', values: [encode(change.oldPassword)] }),
          }),
          new Change({
            operation: 'add',
            modification: new Attribute({ type: 'unicodePwd', values: [encode(change.newPassword)] }),
          }),
        ]),
      );
      return { kind: 'changed' };
    } catch (error) {
      if (error instanceof ResultCodeError)
        return { kind: 'refused', reason: 'policy', message: 'The directory refused the new password.' };
      if (error instanceof DirectoryUnavailable) return { kind: 'unavailable' };
      throw error;
    }
  }
}

/** RFC 3062 §2: the Password Modify extended operation. */
const PASSWORD_MODIFY_OID = '1.3.6.1.4.1.4203.1.11.1';

/**
 * RFC 3062 §2 `PasswdModifyRequestValue ::= SEQUENCE { userIdentity [0], oldPasswd [1],
 * newPasswd [2] }` (context-specific primitive OCTET STRINGs, tags 0x80–0x82).
 */
export function passwordModifyRequest(
  userDn: string,
  change: { oldPassword: string; newPassword: string },
): Buffer {
  const writer = new BerWriter();
  writer.startSequence();
  writer.writeString(userDn, 0x80);
  writer.writeString(change.oldPassword, 0x81);
  writer.writeString(change.newPassword, 0x82);
  writer.endSequence();
  return writer.buffer;
}

/** draft-behera-ldap-password-policy §6.2 errors a person can act on, in words. */
function policyMessage(error: number | undefined): string {
  switch (error) {
    case 5:
      return 'The new password does not meet the directory’s quality rules.';
    case 6:
      return 'The new password is too short for the directory.';
    case 7:
      return 'The password was changed too recently to change it again.';
    case 8:
      return 'The new password was used before; choose another.';
    default:
      return 'The directory refused the new password.';
  }
}
