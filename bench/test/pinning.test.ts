import { describe, expect, it } from 'vitest';
import { planPinning } from '../src/pinning.js';

describe('planPinning', () => {
  it('puts the servers on the first allowed CPU and the load generator on the second', () => {
    expect(planPinning(true, [0, 1])).toEqual({ pinned: true, serverCpu: 0, loadCpu: 1 });
    expect(planPinning(true, [2, 5, 7])).toEqual({ pinned: true, serverCpu: 2, loadCpu: 5 });
  });

  it('runs unpinned, saying why, without taskset', () => {
    const plan = planPinning(false, [0, 1]);
    expect(plan.pinned).toBe(false);
    if (!plan.pinned) expect(plan.reason).toContain('util-linux');
  });

  it('runs unpinned, saying why, with one CPU or an unknown set', () => {
    const one = planPinning(true, [3]);
    expect(one.pinned).toBe(false);
    if (!one.pinned) expect(one.reason).toContain('only 1 CPU');
    expect(planPinning(true, undefined).pinned).toBe(false);
    expect(planPinning(true, []).pinned).toBe(false);
  });
});
