import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic } from '../../commands/catalog/create-topic';
import type { CommandContext } from '../../commands/handle';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { isDomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { type EventStore, WrongExpectedRevisionError } from '../../src/eventstore/port';
import type { TestStore } from '../support/db';
import { sharedStore } from '../support/per-worker';

let db: TestStore;
beforeAll(async () => {
  db = await sharedStore();
});
afterAll(async () => db?.close());

/** The store as another instance draining a queue of writes to the same stream sees it: it loses `rounds` appends. */
function losing(store: EventStore, rounds: number): { store: EventStore; lost: () => number } {
  let lost = 0;
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'append')
        return async (...args: Parameters<EventStore['append']>) => {
          if (lost < rounds) {
            lost++;
            throw new WrongExpectedRevisionError(args[0], args[2] ?? 'any', 0n);
          }
          return target.append(...args);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { store: wrapped, lost: () => lost };
}

describe('a write that keeps losing to writers of other instances', () => {
  it('given 12 lost rounds in a row (more than the 8 attempts), when a topic is created, then it is retried within the time budget and created', async () => {
    const { store, lost } = losing(db.store, 12);
    const ctx: CommandContext = { store, organizationId: newId(), actor: SYSTEM_ACTOR };
    const r = await createTopic(ctx, { website_id: newId(), name: 'Patience' });
    expect(isDomainError(r)).toBe(false);
    expect(lost()).toBe(12);
  });
});
