/**
 * The stable id the login lock counts an account under once the attempt is known to be for it
 * (interaction/login-attempt-limiter.ts `allowAccount`): a local account's `sub`, and a
 * directory entry's stable id (`entryUUID`, `objectGUID`) — known from the search even when the
 * bind fails, and the same whatever name (uid, mail, any spelling) the filter found it by.
 */
export const directoryLoginAccountId = (stableId: string) => `ldap:${stableId}`;
