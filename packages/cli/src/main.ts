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
 * The executable script run by path before the command is installed (`node
 * packages/cli/bin/orders.js`, or `pnpm --filter … start`, which runs it in the package folder):
 * that path from where the person stands (pnpm's INIT_CWD). Anything else (the installed `orders`
 * on PATH, a harness running the sources) is named `orders`.
 */
function invocation(script: string): string {
  if (basename(script) !== 'orders.js') return 'orders';
  return `node ${relative(process.env.INIT_CWD ?? process.cwd(), script)}`;
}
