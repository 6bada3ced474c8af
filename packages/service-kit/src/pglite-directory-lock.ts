import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { shareConnectionString } from './pglite-share.js';

/**
 * One process at a time opens a PGlite data directory: PGlite keeps the database in the memory of the
 * process that opened it and writes it back to the folder, so a second process opening the same
 * folder works on its own copy, and whichever writes last wins (an operator's change, made while the
 * server runs, silently disappears). The owner records itself in `<dir>.lock` (JSON: its pid and,
 * when it shares the database, the 0700 folder of its PostgreSQL wire protocol socket); every other
 * opener reads that file (mode 0600) and connects through the socket, or is refused.
 */
export interface PgliteDirectoryOwner {
  pid: number;
  /** The folder of the Unix socket on which the owner serves the database (pglite-share.ts), or null. */
  socketDir: string | null;
}

/** The directory is open in another live process that does not share it. */
export class PgliteDirectoryInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PgliteDirectoryInUseError';
  }
}

export type DirectoryClaim =
  | { kind: 'owned'; lock: PgliteDirectoryLock }
  /** Another process owns it and serves it: connect here instead of opening the folder. */
  | { kind: 'shared'; connectionString: string; owner: PgliteDirectoryOwner };

export interface PgliteDirectoryLock {
  readonly file: string;
  /** Records the socket folder through which this process now serves the database. */
  publish(socketDir: string): void;
  /** Removes the lock file (only while it is still this process's). */
  release(): void;
}

export const lockFileOf = (dataDir: string) => `${dataDir}.lock`;

/** `process.kill(pid, 0)` tests for existence: EPERM means it exists but belongs to someone else. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(file: string): PgliteDirectoryOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<PgliteDirectoryOwner>;
    if (!Number.isInteger(owner.pid)) return undefined;
    // A lock of an older start may name a TCP port: not a share this version connects to.
    const socketDir = typeof owner.socketDir === 'string' ? owner.socketDir : null;
    return { pid: owner.pid as number, socketDir };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { pid: -1, socketDir: null };
  }
}

/** Written to a temporary file first and linked into place: the lock appears complete, or not at all. */
function writeAtomically(file: string, owner: PgliteDirectoryOwner, replace: boolean): void {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${JSON.stringify(owner)}\n`, { mode: 0o600 });
  try {
    if (replace) renameSync(temporary, file);
    else linkSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

function ownedLock(file: string): PgliteDirectoryLock {
  let released = false;
  return {
    file,
    publish(socketDir) {
      writeAtomically(file, { pid: process.pid, socketDir }, true);
    },
    release() {
      if (released) return;
      released = true;
      if (readOwner(file)?.pid === process.pid) rmSync(file, { force: true });
    },
  };
}

/**
 * Takes the directory for this process, or says who has it. A lock whose process no longer exists
 * (killed, crashed) is stale and taken over.
 */
export function claimPgliteDirectory(dataDir: string): DirectoryClaim {
  const file = lockFileOf(dataDir);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      writeAtomically(file, { pid: process.pid, socketDir: null }, false);
      return { kind: 'owned', lock: ownedLock(file) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(file);
    if (owner === undefined) continue;
    if (owner.pid > 0 && isAlive(owner.pid)) {
      if (owner.socketDir !== null) {
        return { kind: 'shared', connectionString: shareConnectionString(owner.socketDir), owner };
      }
      throw new PgliteDirectoryInUseError(
        `the PGlite database ${dataDir} is open in process ${owner.pid}, which does not share it: stop that ` +
          `process first (if no process ${owner.pid} is yours, delete ${file})`,
      );
    }
    rmSync(file, { force: true });
  }
  throw new PgliteDirectoryInUseError(`could not take the lock ${file} on the PGlite database ${dataDir}`);
}
