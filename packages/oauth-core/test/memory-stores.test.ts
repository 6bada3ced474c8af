import { describe, expect, it } from 'vitest';
import { createMemoryStores } from '../src/storage/memory.js';
import { describeStoreContract } from '../test-support/store-contract/index.js';
import { makeClient } from './fixtures.js';

describeStoreContract('memory', () => {
  const stores = createMemoryStores();
  return { stores, keys: stores.keys, seed: (data) => stores.seed(data), close: () => undefined };
});

describe('createMemoryStores', () => {
  it('takes its seed at creation', async () => {
    const stores = createMemoryStores({ clients: [makeClient()] });
    expect((await stores.clients.findClient('web'))?.clientId).toBe('web');
  });

  it('hands out copies: mutating a returned record does not change the store', async () => {
    const stores = createMemoryStores({ clients: [makeClient()] });
    const client = await stores.clients.findClient('web');
    (client as { clientName: string }).clientName = 'mutated';
    expect((await stores.clients.findClient('web'))?.clientName).toBe('Web');
  });
});
