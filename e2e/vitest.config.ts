import { configDefaults, defineConfig } from 'vitest/config';
import { reporters } from '../vitest.shared.js';
import { suitesMissingPrograms } from './system-requirements.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...suitesMissingPrograms()],
    // On a machine with only Node.js and npm every suite may be left out (see system-requirements.ts).
    passWithNoTests: true,
    reporters: reporters(import.meta.dirname),
    // Each file starts real processes (auth server, orders, SPAs) and a real Chromium; files run
    // one after the other so two stacks and two browsers never compete for the CPU. Nothing
    // asserts on elapsed time: the bounds are for slow, busy machines.
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // expect.poll waits for what a page shows after its scripts and the servers answer; a busy
    // machine can take seconds. A wait, not a timing assertion: it returns as soon as it holds.
    expect: { poll: { timeout: 30_000, interval: 100 } },
  },
});
