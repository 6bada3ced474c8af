import { readFileSync } from 'node:fs';

/**
 * `NAME_FILE=/run/secrets/name` instead of `NAME=value`, as the official database images do: a
 * secret handed over as a file (docker-compose `secrets:`, Kubernetes secret volumes) never shows
 * in `docker inspect`, `/proc/<pid>/environ` of a child or a crash dump of the environment.
 */
export class SecretFileError extends Error {
  /** `variable` is the one to fix; the message is one line: `<variable> <problem>`. */
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = 'SecretFileError';
  }
}

export type ReadSecretFile = (path: string) => string;

const readUtf8: ReadSecretFile = (path) => readFileSync(path, 'utf8');

/**
 * Returns the environment with each `NAME_FILE` of `names` replaced by `NAME` holding the file's
 * content (one trailing line break removed, as `echo` and editors add one). Throws
 * SecretFileError, naming the variable, when both are set, the file cannot be read or is empty.
 * Other variables pass through untouched; the input is not modified.
 */
export function resolveSecretFiles(
  env: Readonly<Record<string, string | undefined>>,
  names: readonly string[],
  readSecretFile: ReadSecretFile = readUtf8,
): Record<string, string | undefined> {
  const resolved: Record<string, string | undefined> = { ...env };
  for (const name of names) {
    const fileVariable = `${name}_FILE`;
    const path = env[fileVariable];
    if (path === undefined || path === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      throw new SecretFileError(name, `and ${fileVariable} are both set: keep one`);
    }
    const value = readSecret(fileVariable, path, readSecretFile).replace(/\r?\n$/, '');
    if (value === '') throw new SecretFileError(fileVariable, `names an empty file: ${path}`);
    resolved[name] = value;
    delete resolved[fileVariable];
  }
  return resolved;
}

function readSecret(fileVariable: string, path: string, readSecretFile: ReadSecretFile): string {
  try {
    return readSecretFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new SecretFileError(fileVariable, `names a file that cannot be read: ${path} (${code})`);
  }
}
