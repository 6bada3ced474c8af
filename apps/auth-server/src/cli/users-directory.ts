import type { Directory, DirectoryEntry } from '../directory/types.js';

/**
 * `users directory list` and `users directory lookup <username>`: what the directory says about
 * its users, read with the service account (README "Directory users", "The users command").
 * Names, ids and groups only: nothing secret is read, so nothing secret is printed.
 */
export const DIRECTORY_USAGE = `  directory list [--limit N]           the directory's users (at most N, default 100)
  directory lookup <username>           one directory user, as sign-in would find them`;

export const DEFAULT_DIRECTORY_LIST_LIMIT = 100;

/** One line per entry, tab-separated like `users list`. */
export function describeDirectoryEntry(entry: DirectoryEntry): string {
  return [
    `${entry.username}\tstable_id=${entry.stableId}`,
    `dn=${entry.dn}`,
    `name=${entry.name ?? '-'}`,
    `email=${entry.email ?? '-'}`,
    `email_verified=${entry.emailVerified}`,
    `groups=${entry.groups.length === 0 ? '-' : entry.groups.join(',')}`,
    `kerberos_principal=${entry.kerberosPrincipal ?? '-'}`,
  ].join('\t');
}

export class DirectoryCommandError extends Error {}

/** Runs one `directory` subcommand; returns the lines to print. */
export async function runDirectoryCommand(directory: Directory, args: readonly string[]): Promise<string[]> {
  const [subcommand, ...rest] = args;
  if (subcommand === 'list') {
    const limitText = rest[0] === '--limit' ? rest[1] : undefined;
    const limit = limitText === undefined ? DEFAULT_DIRECTORY_LIST_LIMIT : Number.parseInt(limitText, 10);
    if (!Number.isInteger(limit) || limit <= 0)
      throw new DirectoryCommandError('--limit must be a positive integer');
    const entries = await directory.list(limit);
    if (entries === 'unavailable')
      throw new DirectoryCommandError('the directory is not reachable (LDAP_URL)');
    return entries.map(describeDirectoryEntry);
  }
  if (subcommand === 'lookup' && rest[0] !== undefined && rest[0] !== '') {
    const entry = await directory.lookupByUsername(rest[0]);
    if (entry === 'unavailable') throw new DirectoryCommandError('the directory is not reachable (LDAP_URL)');
    if (entry === null)
      throw new DirectoryCommandError(`no directory user ${rest[0]} (or the entry is disabled)`);
    return [describeDirectoryEntry(entry)];
  }
  throw new DirectoryCommandError(
    `usage: users directory list [--limit N] | users directory lookup <username>`,
  );
}
