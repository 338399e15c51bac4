/**
 * Read models held in memory per key (a website, a website and kind) at a version: one is used while the version read
 * from the database is the one it was loaded at, loaded once however many reads ask at once, and the least recently
 * read go when their sizes pass the budget. The one just loaded is always kept: one bigger than the budget is held
 * alone (the others go) until another is loaded, rather than loaded again by every read.
 */
export function heldIndexes<T extends { version: string; bytes: number }>(budget: number) {
  const held = new Map<string, T>();
  const loading = new Map<string, Promise<T>>();
  let heldBytes = 0;

  function hold(key: string, index: T) {
    const old = held.get(key);
    if (old) {
      held.delete(key);
      heldBytes -= old.bytes;
    }
    held.set(key, index);
    heldBytes += index.bytes;
    for (const [k, v] of held) {
      if (heldBytes <= budget || k === key) break;
      held.delete(k);
      heldBytes -= v.bytes;
    }
  }

  /** The index of `key` at `version`, loaded when missing or held at another version (given to `load`, which may keep parts of it). */
  function at(key: string, version: string, load: (previous: T | undefined) => Promise<T>): Promise<T> {
    const have = held.get(key);
    if (have && have.version === version) {
      held.delete(key);
      held.set(key, have);
      return Promise.resolve(have);
    }
    const name = `${key}:${version}`;
    const pending = loading.get(name);
    if (pending) return pending;
    const p = load(have).then(
      (index) => {
        loading.delete(name);
        hold(key, index);
        return index;
      },
      (err) => {
        loading.delete(name);
        throw err;
      },
    );
    loading.set(name, p);
    return p;
  }
  /** What is held for `key` (not counted as a read), and the bytes held in all. */
  at.peek = (key: string) => ({ index: held.get(key), heldBytes });
  return at;
}

/** The first index of sorted `a` whose value is >= v. */
export function lowerBound(a: Int32Array, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const DAY_MS = 86_400_000;
/** A UTC day (YYYY-MM-DD) as days since 1970-01-01, and back. */
export const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
export const dayOfNumber = (d: number) => new Date(d * DAY_MS).toISOString().slice(0, 10);
