/** fn memoized by its string argument, the table emptied whenever it reaches `max` entries (fn never returns undefined). */
export function boundedMemo<V>(fn: (key: string) => V, max = 50_000): ((key: string) => V) & { clear(): void } {
  const table = new Map<string, V>();
  const memo = (key: string): V => {
    let v = table.get(key);
    if (v === undefined) {
      v = fn(key);
      if (table.size >= max) table.clear();
      table.set(key, v);
    }
    return v;
  };
  return Object.assign(memo, { clear: () => table.clear() });
}
