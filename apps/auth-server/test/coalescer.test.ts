import { describe, expect, it } from 'vitest';
import { createCoalescer } from '../src/storage/drizzle/coalescer.js';

interface Row {
  key: string;
  value: number;
}

/** A batch reader over a fixed table that records every batch of keys it was asked for. */
function recordingReader(table: Record<string, number>) {
  const batches: string[][] = [];
  return {
    batches,
    async readBatch(keys: readonly string[]): Promise<Row[]> {
      batches.push([...keys]);
      // Rows in another order than the keys, as a database returns them.
      return keys
        .filter((key) => key in table)
        .map((key) => ({ key, value: table[key]! }))
        .reverse();
    },
    keyOf: (row: Row) => row.key,
  };
}

const nextTurn = () => new Promise<void>((done) => setImmediate(done));

describe('createCoalescer', () => {
  it('answers the lookups of one tick with one batch, each with its own row', async () => {
    const reader = recordingReader({ a: 1, b: 2, c: 3 });
    const find = createCoalescer(reader);
    const answers = await Promise.all([find('a'), find('b'), find('c')]);
    expect(answers).toEqual([
      { key: 'a', value: 1 },
      { key: 'b', value: 2 },
      { key: 'c', value: 3 },
    ]);
    expect(reader.batches).toEqual([['a', 'b', 'c']]);
  });

  it('answers null for a key the batch did not find', async () => {
    const reader = recordingReader({ a: 1 });
    const find = createCoalescer(reader);
    expect(await Promise.all([find('a'), find('missing')])).toEqual([{ key: 'a', value: 1 }, null]);
  });

  it('reads a key repeated in one batch once, and answers every lookup of it', async () => {
    const reader = recordingReader({ a: 1, b: 2 });
    const find = createCoalescer(reader);
    const answers = await Promise.all([find('a'), find('b'), find('a'), find('a')]);
    expect(answers.map((row) => row?.value)).toEqual([1, 2, 1, 1]);
    expect(reader.batches).toEqual([['a', 'b']]);
  });

  it('sends a full batch at once and starts the next one', async () => {
    const reader = recordingReader({ a: 1, b: 2, c: 3, d: 4, e: 5 });
    const find = createCoalescer({ ...reader, maxBatch: 2 });
    const answers = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((key) => find(key)));
    expect(answers.map((row) => row?.value)).toEqual([1, 2, 3, 4, 5]);
    expect(reader.batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('counts distinct keys towards the bound, not lookups', async () => {
    const reader = recordingReader({ a: 1, b: 2 });
    const find = createCoalescer({ ...reader, maxBatch: 2 });
    await Promise.all([find('a'), find('a'), find('a'), find('b')]);
    expect(reader.batches).toEqual([['a', 'b']]);
  });

  it('does not hold a lookup beyond the next turn of the event loop', async () => {
    const reader = recordingReader({ a: 1 });
    const find = createCoalescer(reader);
    const answer = find('a');
    await nextTurn();
    expect(reader.batches).toEqual([['a']]);
    expect(await answer).toEqual({ key: 'a', value: 1 });
  });

  it('rejects every lookup of a failed batch with its error, and only those', async () => {
    let fail = true;
    const batches: string[][] = [];
    const find = createCoalescer<string, Row>({
      async readBatch(keys) {
        batches.push([...keys]);
        if (fail) throw new Error('connection terminated');
        return keys.map((key) => ({ key, value: 1 }));
      },
      keyOf: (row) => row.key,
    });
    const failed = await Promise.allSettled([find('a'), find('b'), find('a')]);
    expect(failed.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const outcome of failed) {
      expect((outcome as PromiseRejectedResult).reason).toEqual(new Error('connection terminated'));
    }
    fail = false;
    expect(await find('a')).toEqual({ key: 'a', value: 1 });
    expect(batches).toEqual([['a', 'b'], ['a']]);
  });

  it('rejects the lookups of a batch whose reader throws before it returns a promise', async () => {
    const find = createCoalescer<string, Row>({
      readBatch() {
        throw new Error('no connection');
      },
      keyOf: (row) => row.key,
    });
    await expect(Promise.all([find('a'), find('b')])).rejects.toThrow('no connection');
  });

  it('never answers from an earlier batch: each batch reads afresh', async () => {
    const table: Record<string, number> = { a: 1 };
    const reader = recordingReader(table);
    const find = createCoalescer(reader);
    expect(await find('a')).toEqual({ key: 'a', value: 1 });
    table.a = 2;
    expect(await find('a')).toEqual({ key: 'a', value: 2 });
    delete table.a;
    expect(await find('a')).toBeNull();
    expect(reader.batches).toEqual([['a'], ['a'], ['a']]);
  });

  it('keeps lookups made while a batch is being read out of that batch', async () => {
    const table: Record<string, number> = { a: 1, b: 2 };
    const batches: string[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((done) => {
      release = done;
    });
    const find = createCoalescer<string, Row>({
      async readBatch(keys) {
        batches.push([...keys]);
        const rows = keys.filter((key) => key in table).map((key) => ({ key, value: table[key]! }));
        if (batches.length === 1) await gate;
        return rows;
      },
      keyOf: (row) => row.key,
    });
    const first = find('a');
    await nextTurn();
    // The first batch has read its rows and is still in flight; this lookup must not join it.
    table.a = 10;
    const second = Promise.all([find('a'), find('b')]);
    await nextTurn();
    release();
    expect(await first).toEqual({ key: 'a', value: 1 });
    expect(await second).toEqual([
      { key: 'a', value: 10 },
      { key: 'b', value: 2 },
    ]);
    expect(batches).toEqual([['a'], ['a', 'b']]);
  });

  it('sends a partial batch when the injected schedule says so', async () => {
    const reader = recordingReader({ a: 1, b: 2 });
    const flushes: Array<() => void> = [];
    const find = createCoalescer({ ...reader, schedule: (flush) => flushes.push(flush) });
    const answers = Promise.all([find('a'), find('b')]);
    expect(reader.batches).toEqual([]);
    expect(flushes).toHaveLength(1);
    flushes[0]!();
    expect(await answers).toEqual([
      { key: 'a', value: 1 },
      { key: 'b', value: 2 },
    ]);
  });
});
