/**
 * `run` over items that come one at a time: the calls made in one turn, and those made while a batch is under way, go
 * together in the next batch (at most `max` items; one batch at a time). `run` returns one result per item, in order.
 * When a batch of several fails and `alone` is set, each of its items is run by itself, so one item's failure is its own.
 */
export function coalescing<T, R>(run: (items: T[]) => Promise<R[]>, options: { max?: number; alone?: boolean } = {}): (item: T) => Promise<R> {
  const max = options.max ?? 1024;
  let pending: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  let busy = false;
  const settle = async (batch: typeof pending): Promise<void> => {
    try {
      const results = await run(batch.map((b) => b.item));
      for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
    } catch (err) {
      if (!options.alone || batch.length === 1) for (const b of batch) b.reject(err);
      else await Promise.all(batch.map((b) => settle([b])));
    }
  };
  const next = () => {
    if (busy || pending.length === 0) return;
    const batch = pending.slice(0, max);
    pending = pending.slice(batch.length);
    busy = true;
    void settle(batch).finally(() => {
      busy = false;
      next();
    });
  };
  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (!busy && pending.length === 1) queueMicrotask(next);
    });
}
