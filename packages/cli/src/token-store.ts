import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError, EXIT } from './errors.js';

/** What `orders login` keeps between runs. */
export interface StoredSession {
  /** The session belongs to this issuer and client; another one means "not logged in there". */
  issuer: string;
  clientId: string;
  accessToken: string;
  /** Epoch seconds. */
  accessTokenExpiresAt: number;
  refreshToken: string | null;
  idToken: string | null;
  scope: string;
  /** From the ID token, so `whoami` can check UserInfo's `sub` (OIDC Core §5.3.2). */
  sub: string;
  name: string | null;
  email: string | null;
}

export const TOKEN_FILE = 'tokens.json';
const LOCK_FILE = 'refresh.lock';

/**
 * The session file `<configDir>/tokens.json`: mode 0600 in a 0700 directory (it holds a refresh
 * token), written atomically (a temporary file in the same directory, then `rename`), so a crash or
 * a concurrent reader never sees half a file.
 */
export function createTokenStore(configDir: string) {
  const file = join(configDir, TOKEN_FILE);

  /** Creates the directory 0700 (exactly, whatever the umask); an existing one is left as it is. */
  async function ensureDirectory() {
    const created = await mkdir(configDir, { recursive: true, mode: 0o700 });
    if (created !== undefined) await chmod(configDir, 0o700);
  }

  return {
    file,

    async read(): Promise<StoredSession | null> {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw new CliError(`Cannot read ${file}: ${(error as Error).message}`, EXIT.failure);
      }
      try {
        const session = JSON.parse(text) as StoredSession;
        if (typeof session.accessToken !== 'string' || typeof session.issuer !== 'string') throw new Error();
        return session;
      } catch {
        throw new CliError(
          `${file} is damaged.`,
          EXIT.notLoggedIn,
          'Run `orders logout` (it deletes the file), then `orders login`.',
        );
      }
    },

    async write(session: StoredSession): Promise<void> {
      await ensureDirectory();
      const temporary = join(configDir, `.${TOKEN_FILE}.${randomBytes(6).toString('hex')}.tmp`);
      // `wx`: never follow or reuse an existing path; the mode applies at creation.
      const handle = await open(temporary, 'wx', 0o600);
      try {
        // The creation mode is filtered by the umask; this makes it exactly 0600 whatever the umask.
        await handle.chmod(0o600);
        await handle.writeFile(`${JSON.stringify(session, null, 2)}\n`, 'utf8');
        await handle.sync();
      } finally {
        await handle.close();
      }
      try {
        await rename(temporary, file);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    },

    async remove(): Promise<boolean> {
      try {
        await rm(file);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },

    /**
     * Runs `work` holding `<configDir>/refresh.lock` (created with O_EXCL). Refresh tokens rotate on
     * every use and presenting a used one revokes the whole grant (RFC 9700 §4.14.2), so two `orders`
     * processes must never refresh with the same token: the second waits, then re-reads the file.
     */
    async withRefreshLock<T>(work: () => Promise<T>): Promise<T> {
      await ensureDirectory();
      const lock = join(configDir, LOCK_FILE);
      const deadline = Date.now() + 15_000;
      for (;;) {
        try {
          const handle = await open(lock, 'wx', 0o600);
          await handle.close();
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          // A lock left by a process that died mid-refresh: a refresh takes seconds, not half a minute.
          const age = await stat(lock).then(
            (info) => Date.now() - info.mtimeMs,
            () => 0,
          );
          if (age > 30_000) await rm(lock, { force: true });
          else if (Date.now() > deadline) {
            throw new CliError(
              `Another orders command holds ${lock}.`,
              EXIT.failure,
              'Try again in a moment.',
            );
          } else await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      try {
        return await work();
      } finally {
        await rm(lock, { force: true });
      }
    },
  };
}

export type TokenStore = ReturnType<typeof createTokenStore>;
