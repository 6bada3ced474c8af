import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { describe, expect, it } from 'vitest';
import type { SeedClient, SeedDocument } from '../src/schemas/seed.js';
import { readSeedFile } from '../src/seed.js';
import { startTestApp } from './helpers/app.js';
import { testSeed } from './helpers/seed.js';

/**
 * The OpenID conformance suite's configurations in deploy/conformance (docs/conformance.md): each
 * plan's seed entries load with the real seed loader, alone and all together, and agree with the
 * plan's suite configuration (client ids, secrets, the suite's redirect URIs for the alias, and
 * the public half of each test-only private key).
 */

const FOLDER = join(import.meta.dirname, '../../../deploy/conformance');
const plans = readdirSync(FOLDER, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

interface SuiteClient {
  client_id: string;
  client_secret?: string;
  jwks?: { keys: JWK[] };
}
interface SuiteConfig {
  alias: string;
  server: { discoveryUrl: string };
  client?: SuiteClient;
  client2?: SuiteClient;
}

const configOf = (plan: string): SuiteConfig =>
  JSON.parse(readFileSync(join(FOLDER, plan, 'config.json'), 'utf8')) as SuiteConfig;

describe('deploy/conformance: the suite configurations and their seed entries', () => {
  it('has the seven plans, each listed with its variants in plans.txt', () => {
    expect(plans).toEqual([
      'backchannel-logout',
      'basic',
      'config',
      'fapi2-message-signing',
      'fapi2-security-profile',
      'form-post',
      'frontchannel-logout',
      'rp-initiated-logout',
    ]);
    const listed = readFileSync(join(FOLDER, 'plans.txt'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.split(' ')[1]);
    expect(listed.sort()).toEqual(plans.map((plan) => `${plan}/config.json`));
  });

  it.each(plans)('%s: the seed entries load, and name every client the suite uses', async (plan) => {
    const seed = await readSeedFile(join(FOLDER, plan, 'seed.json'));
    const config = configOf(plan);
    const suiteClients = [config.client, config.client2].filter((client) => client !== undefined);
    expect(suiteClients.map((client) => client.client_id).sort()).toEqual(
      (seed.clients ?? []).map((client) => client.client_id).sort(),
    );
    for (const suiteClient of suiteClients) {
      const seeded = seed.clients?.find((client) => client.client_id === suiteClient.client_id) as SeedClient;
      // The suite answers at https://<suite>/test/a/<alias>/callback (and the logout paths below it).
      expect(seeded.redirect_uris?.every((uri) => uri.endsWith(`/test/a/${config.alias}/callback`))).toBe(
        true,
      );
      expect(seeded.client_secret).toBe(suiteClient.client_secret);
      await expectKeysMatch(seeded, suiteClient);
    }
  });

  it('loads all plans together into a running server (unique client ids)', async () => {
    const documents = await Promise.all(plans.map((plan) => readSeedFile(join(FOLDER, plan, 'seed.json'))));
    const seed: SeedDocument = testSeed();
    seed.clients = [...(seed.clients ?? []), ...documents.flatMap((document) => document.clients ?? [])];
    const { app, close } = await startTestApp({ seed });
    try {
      const bank = await app.protocol.stores.clients.findClient('conformance-fapi2-message-signing-1');
      // Message Signing: signed requests, and signed (JARM) responses in ES256.
      expect(bank).toMatchObject({
        profile: 'fapi2',
        requireSignedRequestObject: true,
        requireSignedAuthorizationResponse: true,
        authorizationSignedResponseAlg: 'ES256',
      });
    } finally {
      await close();
    }
  });
});

/** The suite signs with the private key whose public half the seed registers (same kid, same key). */
async function expectKeysMatch(seeded: SeedClient, suiteClient: SuiteClient) {
  const privateKeys = suiteClient.jwks?.keys ?? [];
  const publicKeys = (seeded.jwks?.keys ?? []) as JWK[];
  expect(privateKeys.length).toBe(publicKeys.length);
  for (const [index, privateKey] of privateKeys.entries()) {
    const publicKey = publicKeys[index] as JWK;
    expect(privateKey.d).toEqual(expect.any(String));
    expect(publicKey.d).toBeUndefined();
    expect(publicKey.kid).toBe(privateKey.kid);
    expect(await calculateJwkThumbprint(publicKey)).toBe(await calculateJwkThumbprint(privateKey));
  }
}
