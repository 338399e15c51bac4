import { expect } from 'vitest';
import { type Aggregate, type Decision, foldEvents } from '../../commands/handle';
import type { DomainEvent } from '../../src/domain/events';
import { type DomainError, isDomainError } from '../../src/domain/errors';

/**
 * given(aggregate, ...past events).when(decide).then(expected events | expected error)
 * Reads as the specification of a command.
 */
export function given<S, E extends DomainEvent>(agg: Aggregate<S, E>, ...history: DomainEvent[]) {
  const state = foldEvents(agg, history);
  return {
    when<R>(decide: (s: S) => Decision<R> | DomainError) {
      const outcome = decide(state);
      const strip = (d: Decision<R>) => d.events.map(({ type, data }) => ({ type, data }));
      return {
        then(expected: DomainEvent[] | DomainError | ((events: DomainEvent[]) => void)) {
          if (typeof expected === 'function') {
            if (isDomainError(outcome)) throw new Error(`expected events, got error ${outcome.kind}: ${outcome.message}`);
            expected(strip(outcome) as DomainEvent[]);
          } else if (Array.isArray(expected)) {
            if (isDomainError(outcome)) throw new Error(`expected events, got error ${outcome.kind}: ${outcome.message}`);
            expect(strip(outcome)).toEqual(expected);
          } else {
            expect(outcome).toEqual(expected);
          }
          return { result: isDomainError(outcome) ? undefined : outcome.result, state };
        },
      };
    },
  };
}
