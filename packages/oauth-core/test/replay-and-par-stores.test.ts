import {
  createMemoryDpopReplayStore,
  createMemoryPushedAuthorizationRequestStore,
  describeDpopReplayStoreContract,
  describePushedAuthorizationRequestStoreContract,
} from '../src/testing.js';

// The in-memory twins of the stores added for DPoP and PAR run the same contract suites as the
// server's database implementations.
describeDpopReplayStoreContract('memory', () => ({ store: createMemoryDpopReplayStore(), close: () => {} }));
describePushedAuthorizationRequestStoreContract('memory', () => ({
  store: createMemoryPushedAuthorizationRequestStore(),
  close: () => {},
}));
