import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSeedDocument, parseSeedText, readSeedFile, SeedError } from '../src/seed.js';

const EXAMPLE = new URL('../../../deploy/seed.example.json', import.meta.url);

/** The example's `${NAME}`s filled as deploy/generate-secrets.mjs fills them from .env. */
async function filledExample(): Promise<string> {
  const text = await readFile(EXAMPLE, 'utf8');
  return text.replace(/\$\{([A-Z0-9_]+)\}/g, (_placeholder, name: string) =>
    name.endsWith('_HOST') ? 'orders.example.test' : randomBytes(32).toString('base64url'),
  );
}

/** Removes the `// ` before the example's commented-out entry, keeping its trailing comments. */
function uncommentProviders(text: string): string {
  return text.replace(/^(\s*)\/\/ (\{|\}|\s{2}")/gm, '$1$2');
}

async function writeTemporary(text: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'auth-seed-file-')), 'seed.json');
  await writeFile(file, text);
  return file;
}

describe('seed file (JSONC)', () => {
  it('deploy/seed.example.json validates with its provider commented out', async () => {
    const document = parseSeedDocument(parseSeedText('seed.example.json', await filledExample()));
    expect(document.identity_providers).toEqual([]);
    expect(document.clients?.map((client) => client.client_id)).toEqual(['orders-web']);
  });

  it("deploy/seed.example.json's commented-out provider validates once uncommented", async () => {
    const text = uncommentProviders(await filledExample());
    const document = parseSeedDocument(parseSeedText('seed.example.json', text));
    expect(document.identity_providers).toHaveLength(1);
    expect(document.identity_providers?.[0]).toMatchObject({
      id: 'corp',
      subject_claims: 'tid_oid',
      client_secret_file: '/run/secrets/corp-oidc-secret',
      link_by_verified_email: false,
    });
  });

  it('accepts comments and trailing commas', async () => {
    const file = await writeTemporary(
      '// seed\n{\n  /* no clients yet */ "clients": [],\n  "users": [], // none\n}\n',
    );
    await expect(readSeedFile(file)).resolves.toEqual({ clients: [], users: [] });
  });

  it('a syntax error in a file with comments names the file, line and column', async () => {
    const file = await writeTemporary(
      '// seed\n{\n  "clients": [\n    { "client_id": "x" "client_name": "y" }\n  ]\n}\n',
    );
    const error = await readSeedFile(file).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SeedError);
    expect((error as Error).message).toBe(`SEED_FILE ${file}:4:24 is not valid JSON: comma expected`);
  });

  it('an empty file or an unclosed comment is a syntax error, not an empty seed', async () => {
    for (const text of ['', '{ "clients": [] } /* open']) {
      const file = await writeTemporary(text);
      await expect(readSeedFile(file)).rejects.toThrow(
        new RegExp(`^SEED_FILE ${file}:1:\\d+ is not valid JSON: `),
      );
    }
  });
});
