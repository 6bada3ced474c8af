import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import type { CommandContext } from './commands/context.js';
import { LIST_HELP, list } from './commands/list.js';
import { DEFAULT_SCOPE, LOGIN_HELP, login } from './commands/login.js';
import { LOGOUT_HELP, logout } from './commands/logout.js';
import { WHOAMI_HELP, whoami } from './commands/whoami.js';
import { CliError, EXIT } from './errors.js';
import { DEFAULTS, resolveSettings } from './settings.js';
import { closestMatch } from './suggest.js';
import { printError, type Terminal } from './terminal.js';

/** `orders --version`: this package's version. */
export const CLI_VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export const MAIN_HELP = `Usage: orders [options] <command> [command options]

Sign in to the orders service from a terminal (OAuth 2.0 device authorization
grant, RFC 8628) and list your orders.

Commands:
  login    sign in: open a URL on any device and enter the code shown
  whoami   show who you are signed in as
  list     list your orders
  logout   revoke the session and delete the stored tokens
  help     show help for a command (orders help <command>)

Options (every command):
  --issuer <url>     authorization server    env ORDERS_ISSUER    (default ${DEFAULTS.issuer})
  --client-id <id>   client registration     env ORDERS_CLIENT_ID (default ${DEFAULTS.clientId})
  --api-url <url>    orders service          env ORDERS_API_URL   (default ${DEFAULTS.apiUrl})
  -h, --help         show help
  -V, --version      show the version

Tokens are kept in $ORDERS_CLI_CONFIG_DIR, else $XDG_CONFIG_HOME/orders-cli,
else ~/.config/orders-cli (tokens.json, mode 0600).

Exit codes:
  0  success
  1  usage error (unknown command or option, bad URL)
  2  sign-in denied or expired, or the server refused the request
  3  the authorization server or the orders API cannot be reached
  4  not signed in, or the session was revoked or expired (run orders login)
  5  other failure (an unexpected server answer, a file problem)
  130  interrupted (Ctrl+C)`;

const GLOBAL_OPTIONS = {
  issuer: { type: 'string' },
  'client-id': { type: 'string' },
  'api-url': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

const COMMANDS = {
  login: { help: LOGIN_HELP, options: { scope: { type: 'string' }, 'no-qr': { type: 'boolean' } } },
  whoami: { help: WHOAMI_HELP, options: { json: { type: 'boolean' } } },
  list: { help: LIST_HELP, options: { json: { type: 'boolean' } } },
  logout: { help: LOGOUT_HELP, options: {} },
} as const;
type CommandName = keyof typeof COMMANDS;

const KNOWN_LONG_OPTIONS = new Set([
  'version',
  ...Object.keys(GLOBAL_OPTIONS),
  ...Object.values(COMMANDS).flatMap((command) => Object.keys(command.options)),
]);

const isCommand = (name: string | undefined): name is CommandName =>
  name !== undefined && Object.hasOwn(COMMANDS, name);

export interface RunEnvironment {
  env: Readonly<Record<string, string | undefined>>;
  terminal: Terminal;
  signal: AbortSignal;
  nowSeconds?: () => number;
  /**
   * How the person started this command (`orders` once installed, `node packages/cli/bin/orders.js`
   * before): a hint that names another command ("Run `orders login`") names it the same way, so it
   * works when pasted.
   */
  invokedAs?: string;
}

/** Parses `argv` (without `node` and the script), runs the command, returns the exit code. */
export async function run(rawArgv: readonly string[], runtime: RunEnvironment): Promise<number> {
  const { terminal } = runtime;
  // `pnpm start -- login` forwards the `--` itself; it separates nothing here.
  const argv = rawArgv[0] === '--' ? rawArgv.slice(1) : rawArgv;
  // One line and the way to more help, never the whole help text nor Node's parser message.
  const usage = (message: string, helpCommand = 'orders --help') => {
    printError(terminal, `orders: ${message} (see ${helpCommand})`);
    return EXIT.usage;
  };
  if (argv.includes('--version') || argv.includes('-V')) {
    terminal.stdout.write(`orders ${CLI_VERSION}\n`);
    return EXIT.ok;
  }

  // An unknown long option first: it may have swallowed the next word, which is then no command.
  const unknownOption = argv.find(
    (arg) => arg.startsWith('--') && !KNOWN_LONG_OPTIONS.has(arg.slice(2).split('=')[0]!),
  );
  if (unknownOption !== undefined && unknownOption !== '--') {
    const suggestion = closestMatch(unknownOption.slice(2).split('=')[0]!, [...KNOWN_LONG_OPTIONS]);
    return usage(`Unknown option '${unknownOption}'${suggestion ? `; did you mean "--${suggestion}"?` : ''}`);
  }
  const commandIndex = argv.findIndex((arg, index) => !arg.startsWith('-') && !takesValue(argv[index - 1]));
  const name = commandIndex === -1 ? undefined : argv[commandIndex];
  if (name === 'help') {
    const topic = argv[commandIndex + 1];
    if (topic === undefined) return printHelp(terminal, MAIN_HELP);
    return isCommand(topic) ? printHelp(terminal, COMMANDS[topic].help) : usage(unknownCommand(topic));
  }
  if (name !== undefined && !isCommand(name)) return usage(unknownCommand(name));

  const command = name === undefined ? undefined : COMMANDS[name];
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: { ...GLOBAL_OPTIONS, ...(command?.options ?? {}) },
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    const options = Object.keys({ ...GLOBAL_OPTIONS, ...(command?.options ?? {}) });
    return usage(describeParseError(error as Error & { code?: string }, options), helpCommandFor(name));
  }
  if (values.help || name === undefined) {
    if (name === undefined && !values.help) return usage('a command is required');
    return printHelp(terminal, command?.help ?? MAIN_HELP);
  }
  if (positionals.length > 1) return usage(`unexpected argument "${positionals[1]}"`, helpCommandFor(name));

  try {
    const context: CommandContext = {
      settings: resolveSettings(values as Record<string, string | undefined>, runtime.env),
      terminal,
      signal: runtime.signal,
      nowSeconds: runtime.nowSeconds ?? (() => Math.floor(Date.now() / 1000)),
    };
    switch (name) {
      case 'login':
        return await login(context, {
          scope: typeof values.scope === 'string' && values.scope !== '' ? values.scope : DEFAULT_SCOPE,
          qr: values['no-qr'] !== true,
        });
      case 'whoami':
        return await whoami(context, { json: values.json === true });
      case 'list':
        return await list(context, { json: values.json === true });
      case 'logout':
        return await logout(context);
    }
  } catch (error) {
    if (error instanceof CliError) {
      printError(terminal, `orders: ${error.message}`);
      if (error.hint) printError(terminal, asInvoked(error.hint, runtime.invokedAs));
      return error.exitCode;
    }
    printError(terminal, `orders: unexpected error: ${(error as Error).stack ?? String(error)}`);
    return EXIT.failure;
  }
}

/** "Run `orders login`." as the person can run it: `orders` itself may not be installed yet. */
function asInvoked(hint: string, invokedAs = 'orders'): string {
  return hint.replaceAll('`orders ', `\`${invokedAs} `);
}

const helpCommandFor = (name: string | undefined) =>
  name === undefined ? 'orders --help' : `orders ${name} --help`;

function unknownCommand(name: string): string {
  const suggestion = closestMatch(name, [...Object.keys(COMMANDS), 'help']);
  return `unknown command "${name}"${suggestion ? `; did you mean "${suggestion}"?` : ''}`;
}

/** Node's parseArgs messages, in one line; an unknown option gets the closest known one. */
function describeParseError(error: Error & { code?: string }, options: readonly string[]): string {
  const unknown = /^Unknown option '(-{1,2}[^']+)'/.exec(error.message)?.[1];
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && unknown !== undefined) {
    const suggestion = closestMatch(unknown.replace(/^-+/, ''), options);
    return `Unknown option '${unknown}'${suggestion ? `; did you mean "--${suggestion}"?` : ''}`;
  }
  return (error.message.split('\n')[0] ?? 'invalid arguments').replace(/\. To specify a positional.*$/, '');
}

/** Global options that take a value, so `--issuer http://x login` finds `login` as the command. */
function takesValue(previous: string | undefined): boolean {
  return (
    previous === '--issuer' ||
    previous === '--client-id' ||
    previous === '--api-url' ||
    previous === '--scope'
  );
}

function printHelp(terminal: Terminal, help: string): number {
  terminal.stdout.write(`${help}\n`);
  return EXIT.ok;
}
