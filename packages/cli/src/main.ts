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
});
process.exitCode = interrupt.signal.aborted ? EXIT.interrupted : code;
