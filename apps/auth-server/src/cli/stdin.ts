import type { Readable } from 'node:stream';

/**
 * A secret piped to a command (`… < password`, `echo secret | …`): all of the input, as UTF-8, less
 * one trailing newline, which is how `echo` and editors end a line and not part of the secret.
 */
export async function readStdin(input: Readable = process.stdin): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of input) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
