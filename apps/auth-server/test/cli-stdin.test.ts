import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readStdin } from '../src/cli/stdin.js';

describe('readStdin (the secret piped to users and keys commands)', () => {
  it.each([
    ['one trailing newline is dropped', ['s3cret\n'], 's3cret'],
    ['a trailing CRLF is dropped', ['s3cret\r\n'], 's3cret'],
    ['only one newline is dropped', ['s3cret\n\n'], 's3cret\n'],
    ['inner spaces and newlines are kept', [' two words \nline'], ' two words \nline'],
    [
      'chunks are joined, a character split across them too',
      [Buffer.from([0x70, 0xc3]), Buffer.from([0xa4, 0x0a])],
      'pä',
    ],
    ['no input is the empty string', [], ''],
  ])('%s', async (_name, chunks, expected) => {
    expect(await readStdin(Readable.from(chunks))).toBe(expected);
  });
});
