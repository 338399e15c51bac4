import type { EventStore } from '../../src/eventstore/port';
import type { Runtime } from '../../src/runtime';

/**
 * The runtime's event store, but every append first waits until the answers read model has applied everything
 * before it: each append is then applied in a batch of its own, as on a busy server, where a provisioned website's
 * catalogue (appended first) is applied before the website itself. Without it the two usually share a batch.
 */
export function stepwise(rt: Runtime): Runtime {
  const answers = rt.runners.get('answers')!;
  const store: EventStore = new Proxy(rt.store, {
    get(target, p) {
      if (p === 'append') {
        return async (...args: Parameters<EventStore['append']>) => {
          if (!(await answers.waitFor(await target.lastPosition(), 10_000))) throw new Error('answers did not catch up');
          return target.append(...args);
        };
      }
      const v = Reflect.get(target, p, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { ...rt, store };
}
