import { conflict, type DomainError, notFound } from '../../src/domain/errors';
import { type EventsOf, type EventType, exhaustive } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';
import type { Aggregate, CommandContext, Decision } from '../handle';
import { newEventsFor } from '../handle';
import type { JudgedConflict } from '../../src/analysis/entity-quality';

/** A website's fact conflicts: `fact-conflicts-<website_id>`; resolving and dismissing are decided on it. */
export const conflictsStream = (websiteId: string) => `fact-conflicts-${websiteId}`;

export const CONFLICT_EVENT_TYPES = ['FactConflictDetected', 'FactConflictResolved', 'FactConflictDismissed'] as const satisfies readonly EventType[];
type ConflictEvent = EventsOf<typeof CONFLICT_EVENT_TYPES>;
type Status = 'open' | 'resolved' | 'dismissed';

export interface ConflictsState {
  conflicts: Map<string, Status>;
}

export const CONFLICT_NOT_FOUND = 'Conflict not found';

export const FactConflicts: Aggregate<ConflictsState, ConflictEvent> = {
  types: CONFLICT_EVENT_TYPES,
  initial: () => ({ conflicts: new Map() }),
  evolve: (s, e) => {
    const conflicts = new Map(s.conflicts);
    switch (e.type) {
      case 'FactConflictDetected':
        if (!conflicts.has(e.data.conflict_id)) conflicts.set(e.data.conflict_id, 'open');
        break;
      case 'FactConflictResolved':
        conflicts.set(e.data.conflict_id, 'resolved');
        break;
      case 'FactConflictDismissed':
        conflicts.set(e.data.conflict_id, 'dismissed');
        break;
      default:
        return exhaustive(e, s);
    }
    return { conflicts };
  },
};

/** Resolve or dismiss an open conflict; the same again changes nothing; the other once decided is 409. */
export function decideCloseConflict(s: ConflictsState, id: string, to: 'resolved' | 'dismissed'): Decision<{ id: string }> | DomainError {
  const status = s.conflicts.get(id);
  if (!status) return notFound(CONFLICT_NOT_FOUND);
  if (status === to) return { events: [], result: { id } };
  if (status !== 'open') return conflict(`Conflict is already ${status}`);
  const type = to === 'resolved' ? 'FactConflictResolved' : 'FactConflictDismissed';
  return { events: [{ type, data: { conflict_id: id } }], result: { id } };
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

/** Records what the judge found in one answer (one append; ids derived from the answer and the fact). */
export async function recordConflicts(ctx: CommandContext, j: Judged) {
  if (!j.conflicts.length) return null;
  const events = newEventsFor(
    ctx,
    j.conflicts.map((c) => {
      const conflict_id = conflictId(j.response_id, c.fact_id);
      return {
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
      };
    }),
  );
  return ctx.store.append(conflictsStream(j.website_id), events, 'any');
}
