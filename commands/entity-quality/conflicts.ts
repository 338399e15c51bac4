import { conflict, type DomainError, notFound } from '../../src/domain/errors';
import { type EventsOf, exhaustive, factConflictEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { deterministicId } from '../../src/domain/ids';
import type { Aggregate, CommandContext, Decision } from '../handle';
import { newEventsFor } from '../handle';
import type { JudgedConflict } from '../../src/analysis/entity-quality';
import type { StreamAppend } from '../../src/eventstore/port';

/** One fact conflict's stream, `fact-conflict-<conflict_id>`: its detection, then its resolution or dismissal, decided there. */
export const conflictStream = (conflictId: string) => `fact-conflict-${conflictId}`;

export const CONFLICT_EVENT_TYPES = typesOf(factConflictEvents);
type ConflictEvent = EventsOf<typeof CONFLICT_EVENT_TYPES>;
type Status = 'open' | 'resolved' | 'dismissed';

export interface ConflictState {
  /** null before its detection */
  status: Status | null;
}

export const CONFLICT_NOT_FOUND = 'Conflict not found';

export const FactConflict: Aggregate<ConflictState, ConflictEvent> = {
  types: CONFLICT_EVENT_TYPES,
  initial: () => ({ status: null }),
  evolve: (s, e) => {
    switch (e.type) {
      case 'FactConflictDetected':
        return s.status === null ? { status: 'open' } : s;
      case 'FactConflictResolved':
        return { status: 'resolved' };
      case 'FactConflictDismissed':
        return { status: 'dismissed' };
      default:
        return exhaustive(e, s);
    }
  },
};

/** Resolve or dismiss an open conflict; the same again changes nothing; the other once decided is 409. */
export function decideCloseConflict(s: ConflictState, id: string, to: 'resolved' | 'dismissed'): Decision<{ id: string }> | DomainError {
  if (s.status === null) return notFound(CONFLICT_NOT_FOUND);
  if (s.status === to) return { events: [], result: { id } };
  if (s.status !== 'open') return conflict(`Conflict is already ${s.status}`);
  const type = to === 'resolved' ? 'FactConflictResolved' : 'FactConflictDismissed';
  return { events: [{ type, data: { conflict_id: id } }], result: { id } };
}

/** A conflict whose fact was edited or rejected: resolved in its stream when open, else left as it is. */
export function decideCloseByFact(s: ConflictState, id: string): Decision<{ id: string }> {
  if (s.status !== 'open') return { events: [], result: { id } };
  return { events: [{ type: 'FactConflictResolved', data: { conflict_id: id } }], result: { id } };
}

/** A conflict's id: one per answer and fact, so a redelivered answer records nothing new. */
export const conflictId = (responseId: string, factId: string) => deterministicId('fact-conflict', responseId, factId);

export interface Judged {
  website_id: string;
  response_id: string;
  model: string;
  judge: 'simulated' | 'engine';
  conflicts: (JudgedConflict & { fact_text: string })[];
}

/**
 * The appends of what the judge found in one answer: each conflict on its own stream (no contention between answers),
 * its event's id derived from the answer and the fact, so a redelivered answer appends nothing.
 */
export function conflictAppends(ctx: CommandContext, j: Judged): StreamAppend[] {
  return j.conflicts.map((c) => {
    const conflict_id = conflictId(j.response_id, c.fact_id);
    const events = newEventsFor(ctx, [
      {
        id: conflict_id,
        type: 'FactConflictDetected' as const,
        data: {
          conflict_id,
          website_id: j.website_id,
          response_id: j.response_id,
          fact_id: c.fact_id,
          fact_text: c.fact_text,
          answer_excerpt: c.excerpt,
          model: j.model,
          judge: j.judge,
        },
      },
    ]);
    return { streamId: conflictStream(conflict_id), events, expected: 'any' as const };
  });
}
