import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAbArguments, summariseRounds } from '../src/ab.js';

describe('parseAbArguments', () => {
  it('reads labelled builds and the options, with defaults', () => {
    const options = parseAbArguments([
      'before=/tmp/a/dist/server.js',
      'after=dist/server.js',
      '--rounds=8',
      '--floor',
    ]);
    expect(options.builds).toEqual([
      { label: 'before', entry: '/tmp/a/dist/server.js' },
      { label: 'after', entry: resolve('dist/server.js') },
    ]);
    expect(options).toMatchObject({
      rounds: 8,
      seconds: 3,
      connections: 32,
      floor: true,
      workloads: ['cc-jwt'],
    });
    expect(parseAbArguments(['a=x.js', '--workloads=introspect,live']).workloads).toEqual([
      'introspect',
      'live',
    ]);
  });

  it('reads --postgres and the refresh workload', () => {
    const options = parseAbArguments(['a=x.js', '--workloads=introspect,refresh', '--postgres']);
    expect(options).toMatchObject({ postgres: true, workloads: ['introspect', 'refresh'] });
    expect(parseAbArguments(['a=x.js']).postgres).toBe(false);
  });

  it('names the builds started with tracing on; the same bundle may run twice', () => {
    const options = parseAbArguments(['off=dist/server.js', 'on=dist/server.js', '--traced=on']);
    expect(options.traced).toEqual(['on']);
    expect(parseAbArguments(['a=x.js']).traced).toEqual([]);
    expect(() => parseAbArguments(['a=x.js', '--traced=b'])).toThrow(/--traced names no build: b/);
  });

  it('refuses what it does not know, with the reason', () => {
    expect(() => parseAbArguments([])).toThrow(/at least one build/);
    expect(() => parseAbArguments(['dist/server.js'])).toThrow(/label=path/);
    expect(() => parseAbArguments(['a=x.js', '--workloads=signin'])).toThrow(/unknown workload signin/);
    expect(() => parseAbArguments(['a=x.js', '--rounds=0'])).toThrow(/positive integer/);
    expect(() => parseAbArguments(['a=x.js', '--fast'])).toThrow(/unknown option --fast/);
  });
});

describe('summariseRounds', () => {
  it('gives the median and the least disturbed reading of each series', () => {
    const [odd, even] = summariseRounds(
      new Map([
        ['cc-jwt after', [180, 150, 400]],
        ['cc-jwt before', [200, 210, 190, 500]],
      ]),
    );
    expect(odd).toMatch(/median 180\.0 µs {2}min 150\.0 µs {2}rounds 180 150 400$/);
    expect(even).toMatch(/median 205\.0 µs {2}min 190\.0 µs/);
  });
});
