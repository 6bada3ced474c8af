import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Serves a PGlite database that this process owns on a Unix socket, in the PostgreSQL wire
 * protocol, so that another process, the operator's `users`/`keys` commands, reads and writes the
 * same database while this one runs. The protocol server has no authentication of its own, so the
 * socket is what keeps others out: it lives in a folder made for this start, mode 0700, so only
 * processes of the same user (and root) can connect; a loopback TCP port would let any local user
 * read every table and write password hashes. Development only.
 *
 * PGlite is one PostgreSQL session. This process keeps using it directly (Drizzle's PGlite driver)
 * while socket clients use it through @electric-sql/pglite-socket, which passes each protocol message
 * on under PGlite's query mutex only. That alone would let this process's statements run inside a
 * socket client's open transaction (or between its Parse and Sync), and a socket client's statements
 * inside one of ours. `SessionGate` closes both gaps: from a socket client's first message until the
 * session is idle again (ReadyForQuery outside a transaction block) it holds PGlite's transaction
 * mutex, which every direct `query`, `exec` and `transaction` of this process takes; and it reports
 * that busy period to the socket server as "in a transaction", so the server passes on only that
 * client's messages until it ends.
 */
export interface PgliteShare {
  /** The 0700 folder holding the socket (`.s.PGSQL.5432`, where libpq and node-postgres look for it). */
  socketDir: string;
  stop(): Promise<void>;
}

/** PostgreSQL's socket file name for the default port: a client given the folder as `host` connects to it. */
export const SHARE_SOCKET_FILE = '.s.PGSQL.5432';

/** The connection string of a share: the socket folder as the host (node-postgres, libpq). */
export const shareConnectionString = (socketDir: string) =>
  `postgres://postgres@${encodeURIComponent(socketDir)}/postgres`;

/** PostgreSQL protocol 3.0 (RFC-less; PostgreSQL docs, "Message Formats"): the startup message's version. */
const PROTOCOL_VERSION_3 = 196_608;

/** Frontend messages after which the backend answers ReadyForQuery: Query, Sync, Terminate, startup. */
function endsWithReadyForQuery(message: Uint8Array): boolean {
  if (
    message.length >= 8 &&
    new DataView(message.buffer, message.byteOffset).getInt32(4) === PROTOCOL_VERSION_3
  )
    return true;
  const type = String.fromCharCode(message[0] ?? 0);
  return type === 'Q' || type === 'S' || type === 'X';
}

function simpleQuery(text: string): Uint8Array {
  const body = Buffer.from(`${text}\0`, 'utf8');
  const message = Buffer.alloc(5 + body.length);
  message.write('Q', 0, 'latin1');
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}

const SYNC = Uint8Array.from([0x53, 0, 0, 0, 4]);

/** The part of PGlite the socket server calls, with a session held across a client's busy period. */
class SessionGate {
  #busy = false;
  #letGo: (() => void) | undefined;

  constructor(private readonly client: PGlite) {}

  get waitReady() {
    return this.client.waitReady;
  }

  isInTransaction(): boolean {
    return this.#busy;
  }

  async runExclusive<T>(work: () => Promise<T>): Promise<T> {
    await this.#hold();
    try {
      return await this.client.runExclusive(work);
    } finally {
      if (!this.#busy) this.#release();
    }
  }

  async execProtocolRawStream(
    message: Uint8Array,
    options: { onRawData: (data: Uint8Array) => void },
  ): Promise<void> {
    // Between Parse and Sync, or inside BEGIN … COMMIT, the session belongs to this client.
    this.#busy = true;
    try {
      await this.client.execProtocolRawStream(message, options);
    } finally {
      this.#busy = !endsWithReadyForQuery(message) || this.client.isInTransaction();
    }
  }

  /** The socket server's clean-up for a client that left while busy: it sends only ROLLBACK. */
  async exec(statement: string): Promise<void> {
    await this.#hold();
    try {
      await this.client.runExclusive(async () => {
        await this.client.execProtocolRaw(SYNC);
        await this.client.execProtocolRaw(simpleQuery(statement));
      });
    } finally {
      this.#busy = false;
      this.#release();
    }
  }

  #hold(): Promise<void> {
    if (this.#letGo) return Promise.resolve();
    return new Promise((held) => {
      void this.client._runExclusiveTransaction(
        () =>
          new Promise<void>((letGo) => {
            this.#letGo = letGo;
            held();
          }),
      );
    });
  }

  #release(): void {
    const letGo = this.#letGo;
    this.#letGo = undefined;
    letGo?.();
  }
}

/** Starts serving `client` on a Unix socket in a new folder only this user can enter. */
export async function sharePglite(client: PGlite): Promise<PgliteShare> {
  // Loaded only here: only a development server that shares its PGlite folder needs it (the bundle,
  // scripts/bundle-server.mjs, leaves it in node_modules beside PGlite).
  const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
  // mkdtemp makes the folder 0700 already; said again so a umask or a platform never widens it.
  const socketDir = await mkdtemp(join(tmpdir(), 'pglite-share-'));
  await chmod(socketDir, 0o700);
  const server = new PGLiteSocketServer({
    db: new SessionGate(client) as unknown as PGlite,
    path: join(socketDir, SHARE_SOCKET_FILE),
    // A command's pool opens a few connections; the gate lets one of them work at a time.
    maxConnections: 20,
  });
  try {
    await server.start();
  } catch (error) {
    await rm(socketDir, { recursive: true, force: true });
    throw error;
  }
  return {
    socketDir,
    stop: async () => {
      await server.stop();
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}
