import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveSecretFiles, SecretFileError } from '../src/secret-files.js';

let directory: string;
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'secret-files-'));
  await writeFile(join(directory, 'api-key'), 's3cr3t-from-file\n');
  await writeFile(join(directory, 'crlf'), 'value\r\n');
  await writeFile(join(directory, 'empty'), '\n');
});
afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('resolveSecretFiles', () => {
  it('reads NAME_FILE into NAME, drops one trailing line break and the _FILE variable', () => {
    const env = { API_KEY_FILE: join(directory, 'api-key'), PORT: '3000' };
    expect(resolveSecretFiles(env, ['API_KEY'])).toEqual({ API_KEY: 's3cr3t-from-file', PORT: '3000' });
    expect(resolveSecretFiles({ X_FILE: join(directory, 'crlf') }, ['X'])).toEqual({ X: 'value' });
    expect(env).toEqual({ API_KEY_FILE: join(directory, 'api-key'), PORT: '3000' });
  });

  it('leaves variables not named, and names without a _FILE, as they are', () => {
    const env = { API_KEY: 'direct', OTHER_FILE: join(directory, 'api-key') };
    expect(resolveSecretFiles(env, ['API_KEY', 'SESSION_SECRET'])).toEqual(env);
  });

  it('refuses both NAME and NAME_FILE, an unreadable file and an empty one, naming the variable', () => {
    const both = { API_KEY: 'x', API_KEY_FILE: join(directory, 'api-key') };
    expect(() => resolveSecretFiles(both, ['API_KEY'])).toThrow(
      new SecretFileError('API_KEY', 'and API_KEY_FILE are both set: keep one'),
    );
    const missing = join(directory, 'missing');
    expect(() => resolveSecretFiles({ API_KEY_FILE: missing }, ['API_KEY'])).toThrow(
      `API_KEY_FILE names a file that cannot be read: ${missing} (ENOENT)`,
    );
    const empty = join(directory, 'empty');
    expect(() => resolveSecretFiles({ API_KEY_FILE: empty }, ['API_KEY'])).toThrow(
      `API_KEY_FILE names an empty file: ${empty}`,
    );
  });
});
