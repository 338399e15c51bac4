import { describe, expect, it } from 'vitest';
import { heldIndexes } from '../../queries/held-indexes';

type Index = { version: string; bytes: number; name: string };

/** Loads counted per key: a read answered from what is held loads nothing. */
function counted(budget: number) {
  const at = heldIndexes<Index>(budget);
  const loads: string[] = [];
  const read = (key: string, version: string, bytes: number) =>
    at(key, version, async () => {
      loads.push(`${key}@${version}`);
      return { version, bytes, name: key };
    });
  return { read, loads };
}

describe('held indexes', () => {
  it('given an index bigger than the budget, when it is read again, then it is not loaded again until another is loaded', async () => {
    const { read, loads } = counted(100);
    await read('big', '1', 500);
    await read('big', '1', 500);
    await read('big', '1', 500);
    expect(loads).toEqual(['big@1']);
    // another website's index pushes it out: the budget holds again
    await read('small', '1', 10);
    await read('small', '1', 10);
    await read('big', '1', 500);
    expect(loads).toEqual(['big@1', 'small@1', 'big@1']);
  });

  it('given indexes past the budget, when one is loaded, then the least recently read go and a moved version loads again', async () => {
    const { read, loads } = counted(100);
    await read('a', '1', 40);
    await read('b', '1', 40);
    await read('a', '1', 40);
    await read('c', '1', 40);
    // b was the least recently read
    await read('a', '1', 40);
    await read('c', '1', 40);
    expect(loads).toEqual(['a@1', 'b@1', 'c@1']);
    await read('b', '1', 40);
    await read('c', '2', 40);
    expect(loads).toEqual(['a@1', 'b@1', 'c@1', 'b@1', 'c@2']);
  });
});
