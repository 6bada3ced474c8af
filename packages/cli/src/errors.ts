/** Exit codes of the `orders` command (README "Exit codes"). Scripts may switch on them. */
export const EXIT = {
  ok: 0,
  /** Unknown command or flag, a bad value, a missing setting. */
  usage: 1,
  /** The user denied the sign-in, the code expired, or the server refused the request. */
  authorization: 2,
  /** The authorization server or the orders API could not be reached (or answered 502/503/504). */
  unreachable: 3,
  /** No stored session, or the stored one was revoked or expired: run `orders login`. */
  notLoggedIn: 4,
  /** Any other failure (an unexpected answer from a server, a local file problem). */
  failure: 5,
  /** Interrupted with Ctrl+C (128 + SIGINT). */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error whose message is meant for the person at the terminal, with the exit code to use. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** A second line suggesting what to do. */
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** True when `error` (or something in its `cause` chain) means the server could not be reached. */
export function isNetworkError(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 6; depth++) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return true;
    if (current.name === 'TimeoutError') return true;
    // undici reports a refused connection as `TypeError: fetch failed` with the reason in `cause`.
    if (current instanceof TypeError && current.message === 'fetch failed' && current.cause === undefined) {
      return true;
    }
    current = current.cause;
  }
  return false;
}

/** A failure to reach `what` at `url`, phrased for the terminal. */
export function unreachable(what: string, url: string): CliError {
  return new CliError(
    `Cannot reach the ${what} at ${url}.`,
    EXIT.unreachable,
    'Check that it is running and that the URL is right (see `orders --help`).',
  );
}
