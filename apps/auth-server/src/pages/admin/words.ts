/**
 * Every English word of the operator console, in one place, so that the console moves into the
 * language catalogues of the other pages as one step. Templates read words from here and never
 * hold a sentence of their own.
 */
export const CONSOLE_WORDS = {
  consoleName: 'Operator console',
  nav: {
    label: 'Console sections',
    overview: 'Overview',
    users: 'Users',
    sessions: 'Sessions',
    clients: 'Clients',
    audit: 'Audit log',
    keys: 'Signing keys',
    seedPlan: 'Seed plan',
  },
  titles: {
    overview: 'Operator console',
    users: 'Users',
    sessions: 'Active sessions',
    clients: 'Clients',
    audit: 'Audit log',
    keys: 'Signing keys',
    seedPlan: 'Seed plan',
    forbidden: 'Not an operator',
    notFound: 'Not found',
    confirm: 'Please confirm',
  },
  forbidden: {
    message: 'You are signed in, but your account is not one of the operators this server names.',
    hint: 'Operators are listed in the seed file\u2019s "admins" member.',
    back: 'Go to your account',
  },
  notFound: 'There is nothing at this address.',
  overview: {
    signInsPerHour: 'Sign-ins per hour (last 12 hours)',
    hourColumn: 'Hour (UTC)',
    countColumn: 'Sign-ins',
    failuresColumn: 'Failed sign-ins',
    failures: 'Failed sign-ins (last 12 hours)',
    signIns: 'Sign-ins (last 12 hours)',
    lockouts: 'Accounts locked out now',
    activeSessions: 'Active sessions',
    keyAge: 'Age of the signing key in use',
    noKey: 'no signing key yet',
    users: 'Users',
    disabledUsers: 'Disabled users',
    seedDrift: 'Seed drift',
    seedDriftUnknown: 'No seed file to compare with.',
    summary: 'Numbers at a glance',
  },
  users: {
    search: 'Search users',
    searchHint: 'Username, name, email address or sub',
    searchButton: 'Search',
    username: 'Username',
    name: 'Name',
    email: 'Email',
    source: 'Source',
    status: 'Status',
    none: 'No user matches.',
  },
  sources: {
    seed: 'seed file',
    operator: 'operator',
    directory: 'directory',
    federation: 'upstream provider',
    registered: 'registered itself',
  } as Record<string, string>,
  status: { enabled: 'enabled', disabled: 'disabled' },
  user: {
    details: 'Details',
    sub: 'Subject (sub)',
    emailVerified: 'verified',
    emailUnverified: 'not verified',
    mfaRequired: 'Second factor required',
    yes: 'yes',
    no: 'no',
    groups: 'Groups',
    noGroups: 'none',
    factors: 'Second factors',
    authenticatorApps: 'Authenticator apps',
    passkeys: 'Passkeys',
    recoveryCodes: 'Recovery codes left',
    sessions: 'Sessions',
    sessionsOf: (username: string) => `Sessions of ${username}`,
    noSessions: 'No active session.',
    linked: 'Linked sign-in services',
    noLinked: 'None.',
    actions: 'Actions',
  },
  sessions: {
    user: 'User',
    methods: 'Methods',
    ip: 'Address',
    started: 'Started',
    lastUsed: 'Last used',
    expires: 'Expires',
    none: 'No active session.',
    unknown: 'unknown',
  },
  clients: {
    clientId: 'Client id',
    name: 'Name',
    source: 'Source',
    status: 'Status',
    activeGrants: 'Active grants',
    lastUsed: 'Last grant',
    never: 'never',
    none: 'No client is registered.',
    redirectUris: 'Redirect URIs',
    postLogoutRedirectUris: 'Post-logout redirect URIs',
    grantTypes: 'Grant types',
    scopes: 'Scopes',
    skipConsent: 'Skips consent',
    requireMfa: 'Requires a second factor',
    backchannelLogout: 'Back-channel logout URI',
    authMethods: 'Client authentication',
    readOnly: 'Clients come from the seed file (or registered themselves): change them in the file.',
    back: 'All clients',
  },
  keys: {
    kid: 'Key id',
    alg: 'Algorithm',
    status: 'Status',
    activates: 'Signs from',
    retires: 'Stops signing',
    removeAfter: 'Unpublished after',
    statuses: {
      next: 'published, not signing yet',
      active: 'signing',
      retired: 'published, no longer signing',
      expired: 'due for removal',
    },
    none: 'No signing key yet.',
  },
  audit: {
    filters: 'Filter events',
    sub: 'Subject (sub)',
    clientId: 'Client id',
    event: 'Event',
    eventAny: 'any event',
    since: 'From (UTC date)',
    until: 'Before (UTC date)',
    apply: 'Show events',
    time: 'Time',
    ip: 'Address',
    actor: 'Operator',
    outcome: 'Outcome',
    outcomes: { success: 'success', failure: 'failure' } as Record<string, string>,
    none: 'No event matches.',
    invalidFilter: 'That filter could not be read: showing the newest events.',
  },
  seedPlan: {
    noSeed: 'This server runs without a seed file (SEED_FILE): there is nothing to compare.',
    unreadable: 'The seed file cannot be read or is not valid; the next start would fail:',
    lead: 'What applying the seed file now (at the next start) would change. The file is read again for this page.',
    noChanges: 'The seed file and the database agree: applying it changes nothing.',
    changes: 'Changes',
    kind: 'Kind',
    id: 'Id',
    action: 'Change',
    members: 'Members',
    undoes: 'Operator changes the file would undo',
    keeps: 'Operator changes the file leaves alone',
    kinds: {
      clients: 'client',
      resources: 'resource',
      users: 'user',
      identity_providers: 'provider',
    } as Record<string, string>,
    actions: {
      add: 'added',
      change: 'changed',
      enable: 'enabled again (the file names it)',
      disable: 'disabled (the file no longer names it)',
    } as Record<string, string>,
    undone: {
      operator_managed: 'an operator took this user over; the file takes it back',
      password_replaced: 'the stored password stops working: the file gives another',
      factor_restored: 'the authenticator app removed since comes back',
      registration_adopted:
        'a self-registered client becomes the file\u2019s; its registration access token stops working',
    } as Record<string, string>,
    kept: { disabled_by_operator: 'disabled by an operator: stays disabled' } as Record<string, string>,
    drift: (changes: number, undoes: number) =>
      `Applying the seed file would make ${changes} change(s) and undo ${undoes} operator change(s).`,
    driftLink: 'See the seed plan',
  },
  paging: {
    label: 'Pages',
    first: 'First page',
    previous: 'Previous page',
    next: 'Next page',
    position: (page: number, pages: number) => `Page ${page} of ${pages}`,
  },
  time: {
    utc: 'UTC',
    dash: '\u2014',
    age: (seconds: number) =>
      seconds >= 86_400
        ? `${Math.floor(seconds / 86_400)} day(s)`
        : seconds >= 3600
          ? `${Math.floor(seconds / 3600)} hour(s)`
          : `${Math.floor(seconds / 60)} minute(s)`,
  },
  confirm: {
    cancel: 'Cancel',
  },
  signedInAs: (username: string) => `Signed in as ${username}`,
  account: 'Your account',
} as const;

/**
 * The words of each console action: its button, the question on its confirm page, the confirm
 * button, and the notice after it ran. Keyed like the actions table (src/routes/admin-console/actions.ts).
 */
export const ACTION_WORDS = {
  disable: {
    button: 'Disable',
    question: (who: string) =>
      `Disable ${who}? They can no longer sign in; their sessions end and every application is told (back-channel logout).`,
    confirm: 'Disable the user',
    done: 'User disabled; their sessions ended.',
  },
  enable: {
    button: 'Enable',
    question: (who: string) => `Enable ${who}? They can sign in again.`,
    confirm: 'Enable the user',
    done: 'User enabled.',
  },
  'reset-mfa': {
    button: 'Reset second factors',
    question: (who: string) =>
      `Remove every authenticator app, passkey and recovery code of ${who}? Their sessions end too; the next sign-in asks for a new factor where one is required.`,
    confirm: 'Reset second factors',
    done: 'Second factors removed; sessions ended.',
  },
  'send-reset': {
    button: 'Send password reset mail',
    question: (who: string) => `Mail ${who} a link to choose a new password?`,
    confirm: 'Send the mail',
    done: 'Password reset mail sent.',
    failed: 'No mail was sent: the user has no address of their own here, no local password, or mail is off.',
  },
  'end-sessions': {
    button: 'End sessions',
    question: (who: string) =>
      `End every session of ${who}? Their applications are told (back-channel logout) and their tokens revoked.`,
    confirm: 'End the sessions',
    done: 'Sessions ended.',
  },
  rotate: {
    button: 'Rotate keys',
    question: () =>
      'Add new signing keys? They are published now and start signing once every relying party can have fetched them; the current keys stop signing then and stay published for a day.',
    confirm: 'Rotate the keys',
    done: 'New keys added.',
  },
} as const;

export type ConsoleActionName = keyof typeof ACTION_WORDS;
