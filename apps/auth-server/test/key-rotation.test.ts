import { createTestClock } from '@oidc-orders/oauth-core/testing';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rotateSigningKeys } from '../src/keys/rotation.js';
import { createKeyStore } from '../src/storage/drizzle/stores.js';
import { basicAuthorization, FORM, form, startTestApp, type TestApp, testConfig } from './helpers/app.js';
import { TEST_SECRETS } from './helpers/seed.js';

const clock = createTestClock(Math.floor(Date.now() / 1000));
let app: TestApp;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ app, close } = await startTestApp({ clock }));
});
afterAll(() => close());

async function publishedKids(): Promise<string[]> {
  const { keys } = (await app.inject({ method: 'GET', url: '/jwks' })).json() as {
    keys: Array<{ kid: string }>;
  };
  return keys.map((key) => key.kid).sort();
}

async function signingKid(): Promise<string | undefined> {
  const response = await app.inject({
    method: 'POST',
    url: '/token',
    headers: { ...FORM, authorization: basicAuthorization('service', TEST_SECRETS.service) },
    payload: form({ grant_type: 'client_credentials', scope: 'orders.read' }),
  });
  return decodeProtectedHeader(response.json().access_token).kid;
}

async function refreshKeyRing() {
  await app.keyRing.refresh(await createKeyStore(app.database.db).listSigningKeys());
}

describe('signing key rotation', () => {
  it('publishes new keys before they sign, and keeps old keys published until removeAfter', async () => {
    const original = await publishedKids();
    const originalKid = await signingKid();
    expect(original).toContain(originalKid);

    const { added, retired } = await rotateSigningKeys(
      app.database.db,
      testConfig().keyEncryptionKey,
      clock,
      {
        activateInSeconds: 600,
        keepPublishedSeconds: 3600,
      },
    );
    expect(retired.sort()).toEqual(original);
    const newEs256 = added.find((key) => key.alg === 'ES256')?.kid;
    await refreshKeyRing();

    // Published at once, not yet signing.
    expect(await publishedKids()).toEqual([...original, ...added.map((key) => key.kid)].sort());
    expect(await signingKid()).toBe(originalKid);

    clock.advance(601);
    expect(await signingKid()).toBe(newEs256);
    expect(await publishedKids()).toHaveLength(4);

    clock.advance(3600);
    expect(await publishedKids()).toEqual(added.map((key) => key.kid).sort());

    // The next rotation deletes the rows past removeAfter.
    const next = await rotateSigningKeys(app.database.db, testConfig().keyEncryptionKey, clock, {
      activateInSeconds: 600,
      keepPublishedSeconds: 3600,
    });
    expect(next.deleted.sort()).toEqual(original);
  });
});
