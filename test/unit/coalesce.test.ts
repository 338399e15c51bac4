import { describe, expect, it } from 'vitest';
import { coalescing } from '../../src/domain/coalesce';

/** A run that records each batch it is given and is released by hand. */
function recorder(fail?: (items: number[]) => boolean) {
  const batches: number[][] = [];
  const gates: (() => void)[] = [];
  const run = async (items: number[]) => {
    batches.push(items);
    await new Promise<void>((r) => gates.push(r));
    if (fail?.(items)) throw new Error(`failed ${items.join(',')}`);
    return items.map((i) => i * 10);
  };
  const release = async () => {
    while (gates.length) gates.shift()?.();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { batches, run, release };
}

describe('coalescing', () => {
  it('given calls made in one turn, when run, then they go in one batch and each gets its own result', async () => {
    const r = recorder();
    const call = coalescing(r.run);
    const out = Promise.all([call(1), call(2), call(3)]);
    await new Promise((res) => setTimeout(res, 0));
    await r.release();
    expect(await out).toEqual([10, 20, 30]);
    expect(r.batches).toEqual([[1, 2, 3]]);
  });

  it('given a batch under way, when more calls come, then they wait and go together next', async () => {
    const r = recorder();
    const call = coalescing(r.run);
    const first = call(1);
    await new Promise((res) => setTimeout(res, 0));
    const later = [call(2), call(3)];
    await new Promise((res) => setTimeout(res, 0));
    expect(r.batches).toEqual([[1]]);
    await r.release();
    await r.release();
    expect(await first).toBe(10);
    expect(await Promise.all(later)).toEqual([20, 30]);
    expect(r.batches).toEqual([[1], [2, 3]]);
  });

  it('given max, when more calls are waiting, then a batch holds at most max of them', async () => {
    const r = recorder();
    const call = coalescing(r.run, { max: 2 });
    const out = Promise.all([1, 2, 3, 4, 5].map(call));
    for (let i = 0; i < 4; i++) {
      await new Promise((res) => setTimeout(res, 0));
      await r.release();
    }
    expect(await out).toEqual([10, 20, 30, 40, 50]);
    expect(r.batches).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('given alone, when a batch fails, then each item runs by itself and only the failing one is refused', async () => {
    const r = recorder((items) => items.includes(2));
    const call = coalescing(r.run, { alone: true });
    const out = [call(1), call(2), call(3)].map((p) =>
      p.then(
        (v) => ({ v }),
        (e: Error) => ({ e: e.message }),
      ),
    );
    for (let i = 0; i < 3; i++) {
      await new Promise((res) => setTimeout(res, 0));
      await r.release();
    }
    expect(await Promise.all(out)).toEqual([{ v: 10 }, { e: 'failed 2' }, { v: 30 }]);
    expect(r.batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('without alone, when a batch fails, then every call of it is refused with the error', async () => {
    const r = recorder(() => true);
    const call = coalescing(r.run);
    const out = [call(1), call(2)].map((p) =>
      p.then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    await new Promise((res) => setTimeout(res, 0));
    await r.release();
    expect(await Promise.all(out)).toEqual(['failed 1,2', 'failed 1,2']);
    expect(r.batches).toEqual([[1, 2]]);
  });
});
