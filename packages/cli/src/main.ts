import { basename, relative } from 'node:path';
import { EXIT } from './errors.js';
import { run } from './run.js';

/**
 * Process entry point of `orders`: Ctrl+C aborts the running command (which then exits 130) and
 * the exit code is the command's.
 */
const interrupt = new AbortController();
process.once('SIGINT', () => interrupt.abort());

const code = await run(process.argv.slice(2), {
  env: process.env,
  terminal: { stdout: process.stdout, stderr: process.stderr },
  signal: interrupt.signal,
  invokedAs: invocation(process.argv[1] ?? 'orders'),
});
process.exitCode = interrupt.signal.aborted ? EXIT.interrupted : code;

/**
 * `orders` when run as the installed command (npm link puts an `orders` on PATH); otherwise the
 * script as a path from where the person stands (pnpm's INIT_CWD: `pnpm --filter … start` runs in
 * the package folder), e.g. `node packages/cli/bin/orders.js`.
 */
function invocation(script: string): string {
  if (basename(script) === 'orders') return 'orders';
  return `node ${relative(process.env.INIT_CWD ?? process.cwd(), script)}`;
}
