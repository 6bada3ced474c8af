import type { DirectoryConfig } from './config.js';
import type { DirectoryLog } from './ldap-directory.js';
import type { Directory } from './types.js';

/**
 * The directory, or null when `LDAP_URL` is not set. The LDAP client (`ldapts`) is imported only
 * here and only when configured, so a server without a directory never loads it.
 */
export async function openDirectory(
  config: DirectoryConfig | null,
  log: DirectoryLog,
): Promise<Directory | null> {
  if (config === null) return null;
  const { createLdapDirectory } = await import('./ldap-directory.js');
  return createLdapDirectory(config, log);
}
