import { type Client, Filter } from 'ldapts';
import type { DirectoryConfig } from './config.js';

/**
 * A user's groups, each a group entry under `LDAP_GROUP_BASE_DN` that lists the user's full DN (a
 * group of the same name elsewhere grants nothing). Nested groups: Active Directory resolves them
 * itself with LDAP_MATCHING_RULE_IN_CHAIN (MS-ADTS §3.1.1.3.4.4.3); elsewhere a breadth-first walk
 * up the `member` links, bounded in depth and size so a cycle or a huge tree cannot stall a sign-in.
 */

const IN_CHAIN = '1.2.840.113556.1.4.1941';
const MAX_DEPTH = 5;
const MAX_GROUPS = 200;

/**
 * Active Directory's search for every group that holds `userDn`, directly or through other groups:
 * the member attribute with LDAP_MATCHING_RULE_IN_CHAIN (an extensible match, RFC 4515 §3), the DN
 * escaped as an assertion value.
 */
export function inChainMemberFilter(config: DirectoryConfig, userDn: string): string {
  return `(&${config.groupFilter}(${config.groupMemberAttribute}:${IN_CHAIN}:=${Filter.escape(userDn)}))`;
}

export interface GroupReader {
  namesOf(client: Client, userDn: string): Promise<string[]>;
}

interface GroupEntry {
  dn: string;
  cn: string;
}

export function createGroupReader(config: DirectoryConfig): GroupReader {
  const base = config.groupBaseDn;
  const member = config.groupMemberAttribute;

  async function groupsListing(client: Client, filter: string): Promise<GroupEntry[]> {
    if (base === undefined) return [];
    const { searchEntries } = await client.search(base, {
      scope: 'sub',
      filter,
      attributes: ['cn'],
      sizeLimit: MAX_GROUPS,
    });
    return searchEntries.map((entry) => ({
      dn: entry.dn,
      cn: String(Array.isArray(entry.cn) ? entry.cn[0] : entry.cn),
    }));
  }

  async function walk(client: Client, userDn: string): Promise<GroupEntry[]> {
    const seen = new Map<string, GroupEntry>();
    let frontier = [userDn];
    for (let depth = 0; depth < MAX_DEPTH && frontier.length > 0 && seen.size < MAX_GROUPS; depth += 1) {
      const anyOf = frontier.map((dn) => `(${member}=${Filter.escape(dn)})`).join('');
      const filter = `(&${config.groupFilter}(|${anyOf}))`;
      const found = (await groupsListing(client, filter)).filter(
        (group) => !seen.has(group.dn.toLowerCase()),
      );
      for (const group of found) seen.set(group.dn.toLowerCase(), group);
      frontier = found.map((group) => group.dn);
    }
    return [...seen.values()];
  }

  return {
    namesOf: async (client, userDn) => {
      const groups = config.matchingRuleInChain
        ? await groupsListing(client, inChainMemberFilter(config, userDn))
        : await walk(client, userDn);
      return [...new Set(groups.map((group) => group.cn))].sort();
    },
  };
}
