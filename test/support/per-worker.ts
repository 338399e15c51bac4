import { freshStore, type TestStore } from './db';

/** how long a shared thing outlives a file that let it go: the worker's next file takes it over sooner */
const IDLE_MS = 3000;

/**
 * One `open()` per test process, handed from file to file (vitest runs a worker's files one after another in one
 * process: isolate false): the first file that asks opens it, each file's `close` lets it go (after `release`, e.g.
 * a wait until it has nothing in hand), and it is closed for real when no file has taken it over within `idleMs`
 * (IDLE_MS by default; null: kept until the process ends, for what costs nothing while idle).
 */
export function perWorker<T extends { close(): Promise<void> }>(
  open: () => Promise<T>,
  o: { release?: (t: T) => Promise<void>; idleMs?: number | null } = {},
): () => Promise<T> {
  const idleMs = o.idleMs === undefined ? IDLE_MS : o.idleMs;
  let shared: { it: Promise<T>; idle: ReturnType<typeof setTimeout> | null } | undefined;
  return async () => {
    if (shared?.idle) clearTimeout(shared.idle);
    if (shared) shared.idle = null;
    const mine = (shared ??= {
      it: open().catch((err) => {
        shared = undefined;
        throw err;
      }),
      idle: null,
    });
    const it = await mine.it;
    return {
      ...it,
      async close() {
        await o.release?.(it);
        if (shared !== mine || idleMs === null) return;
        mine.idle = setTimeout(() => {
          if (shared !== mine || mine.idle === null) return;
          shared = undefined;
          void it.close().catch(() => undefined);
        }, idleMs);
        mine.idle.unref();
      },
    };
  };
}

/**
 * This test process's event store over one fresh database (`freshStore()`, its pool of 10), for files whose tests
 * read and write only streams and rows of their own (random ids): no read of the whole log or of its head, no count
 * over a table, no settings, no replaced store functions left in place. A fresh database costs about 0.3 s of
 * Postgres CPU (its copy, the store's tables, its drop at the end of the run). Idle it does nothing (no poll; its
 * pool lets idle connections go), so it is kept for every later file of the worker.
 */
export const sharedStore: () => Promise<TestStore> = perWorker(() => freshStore(), { idleMs: null });
