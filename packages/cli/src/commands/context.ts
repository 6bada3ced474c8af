import type { Settings } from '../settings.js';
import type { Terminal } from '../terminal.js';

/** What every command receives: where to connect, where to write, how to tell time, when to stop. */
export interface CommandContext {
  settings: Settings;
  terminal: Terminal;
  /** Aborted on Ctrl+C. */
  signal: AbortSignal;
  nowSeconds: () => number;
}
