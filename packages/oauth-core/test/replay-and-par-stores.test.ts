import { createMemoryDpopReplayStore, createMemoryPushedAuthorizationRequestStore } from '../src/testing.js';
import {
  describeDpopReplayStoreContract,
  describePushedAuthorizationRequestStoreContract,
} from '../test-support/store-contract/index.js';

// The in-memory twins of the stores added for DPoP and PAR run the same contract suites as the
// server's database implementations.
describeDpopReplayStoreContract('memory', () => ({ store: createMemoryDpopReplayStore(), close: () => {} }));
describePushedAuthorizationRequestStoreContract('memory', () => ({
  store: createMemoryPushedAuthorizationRequestStore(),
  close: () => {},
}));
