import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

type Environment = Readonly<Record<string, string | undefined>>;

/** The repository's root, where `pnpm dev` keeps `.data/` unless DEV_DATA_DIR moves it. */
const REPOSITORY_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Written by scripts/dev.mjs at each start: the environment it gives the auth server. */
export const DEV_SETTINGS_FILE = 'auth-server.env.json';

/** The folder `pnpm dev` uses, found the way scripts/dev.mjs finds it. */
export function devDataDirectory(env: Environment): string {
  return env.DEV_DATA_DIR
    ? resolve(env.INIT_CWD ?? process.cwd(), env.DEV_DATA_DIR)
    : join(REPOSITORY_ROOT, '.data');
}

const given = (env: Environment, name: string) => (env[name] ?? '') !== '';

/**
 * The environment the operator commands run with. With DATABASE_URL (or DATABASE_URL_FILE) it is the
 * process environment as it is. Without, it is what `pnpm dev` gives its auth server (database, key-
 * encryption key, issuer), so that in development the commands act on the development database, with
 * the development secrets, and need no settings; a variable set explicitly still wins. `note` says
 * which was chosen, as one line. No DATABASE_URL and no `pnpm dev` settings: the environment as it
 * is, and loadConfig names the missing variable.
 */
export function commandEnvironment(env: Environment, note: (line: string) => void): Environment {
  if (given(env, 'DATABASE_URL') || given(env, 'DATABASE_URL_FILE')) return env;
  const file = join(devDataDirectory(env), DEV_SETTINGS_FILE);
  if (!existsSync(file)) return env;
  const recorded = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  const explicit = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  note(`no DATABASE_URL: using the pnpm dev database and settings (${file})`);
  return { ...recorded, ...explicit };
}
