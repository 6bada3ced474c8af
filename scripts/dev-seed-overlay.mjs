// The operator's own additions to `pnpm dev`'s seed: a file scripts/dev.mjs reads at every start
// and merges into the seed it generates, and never writes. `.data/dev-seed.json` is rewritten at
// each start (its ports and secrets follow the launcher's); what the operator adds there would be
// lost, so it goes here instead (docs/development.md, "Your own seed entries").
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/** The default overlay, beside the generated seed: `<data folder>/seed.local.json`. */
export const SEED_OVERLAY_FILE = 'seed.local.json';

/**
 * The seed's lists and the member that names an entry: an overlay entry with the name of a generated
 * one replaces it (another redirect URI for `orders-web`, say); any other entry is added.
 */
export const SEED_LIST_KEYS = {
  clients: 'client_id',
  resources: 'id',
  users: 'sub',
  identity_providers: 'id',
};

/**
 * SEED_OVERLAY, else SEED_FILE (relative to where pnpm was started), else the default file in the
 * data folder. The auth server's SEED_FILE is the seed pnpm dev writes, so a SEED_FILE given to
 * pnpm dev is taken as the operator's entries and merged like an overlay, never dropped.
 */
export function seedOverlayPath(env, dataDir) {
  const named = env.SEED_OVERLAY || env.SEED_FILE;
  if (named) return resolve(env.INIT_CWD ?? process.cwd(), named);
  return join(dataDir, SEED_OVERLAY_FILE);
}

/**
 * The overlay document, or undefined when there is none. It is JSON with comments (JSONC), read the
 * way the auth server reads SEED_FILE (apps/auth-server/src/seed.ts). A file named by SEED_OVERLAY
 * must exist; a problem is thrown as one line naming the file.
 */
export function readSeedOverlay(path, { required }) {
  if (!existsSync(path)) {
    if (required) throw new Error(`seed overlay ${path} (SEED_OVERLAY or SEED_FILE) does not exist`);
    return undefined;
  }
  // jsonc-parser is the auth server's dependency; the repository root has none of its own.
  const requireFromAuthServer = createRequire(
    resolve(import.meta.dirname, '../apps/auth-server/package.json'),
  );
  const { parse, printParseErrorCode } = requireFromAuthServer('jsonc-parser');
  const errors = [];
  const overlay = parse(readFileSync(path, 'utf8'), errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    throw new Error(`seed overlay ${path} is not valid JSON: ${printParseErrorCode(errors[0].error)}`);
  }
  if (typeof overlay !== 'object' || overlay === null || Array.isArray(overlay)) {
    throw new Error(`seed overlay ${path} must hold one JSON object, as a seed file does`);
  }
  for (const [list, key] of Object.entries(SEED_LIST_KEYS)) {
    if (overlay[list] !== undefined && !Array.isArray(overlay[list])) {
      throw new Error(`seed overlay ${path}: ${list} must be a list (its entries are named by ${key})`);
    }
  }
  return overlay;
}

/**
 * The generated seed with the overlay merged in: list entries by name (SEED_LIST_KEYS), every other
 * member (`admins`, `client_registration`, …) as the overlay gives it. Neither input is changed.
 */
export function mergeSeed(generated, overlay) {
  if (overlay === undefined) return generated;
  const merged = { ...generated, ...overlay };
  for (const [list, key] of Object.entries(SEED_LIST_KEYS)) {
    if (overlay[list] === undefined) continue;
    const added = new Map(overlay[list].map((entry) => [entry?.[key], entry]));
    const kept = (generated[list] ?? []).filter((entry) => !added.has(entry[key]));
    merged[list] = [...kept, ...overlay[list]];
  }
  return merged;
}

/** What the overlay brings, in words for the launcher's line: `identity providers upstream; users bob`. */
export function describeOverlay(overlay) {
  const parts = [];
  for (const [list, key] of Object.entries(SEED_LIST_KEYS)) {
    const names = (overlay[list] ?? []).map((entry) => entry?.[key] ?? entry?.username ?? '?');
    if (names.length > 0) parts.push(`${list.replace('_', ' ')} ${names.join(', ')}`);
  }
  const others = Object.keys(overlay).filter((member) => !(member in SEED_LIST_KEYS));
  if (others.length > 0) parts.push(others.join(', '));
  return parts.length > 0 ? parts.join('; ') : 'nothing';
}
