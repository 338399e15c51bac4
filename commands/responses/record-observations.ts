import type { DomainEvent } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';
import { WrongExpectedRevisionError } from '../../src/eventstore/port';
import { type CommandContext, newEventsFor } from '../handle';

export interface FoundObservation {
  entity_id: string;
  attribute_id: string;
  positive: boolean;
  score: number | null;
  text_span: string;
}

export interface Observed {
  response_id: string;
  website_id: string;
  prompt_id: string;
  location_id: string | null;
  schedule_id: string | null;
  model: string;
  /** the answer's time */
  observed_at: string;
  extractor: 'rules' | 'llm';
  observations: FoundObservation[];
  /** an LLM judge's call */
  credits?: { model: string; credits: number; input_tokens: number | null; output_tokens: number | null };
}

/** One answer's observations (and the judge's credits), with ids derived from the answer: extracted once. */
export function decideObservations(o: Observed): (DomainEvent & { id: string })[] {
  const events: (DomainEvent & { id: string })[] = [
    {
      id: deterministicId('observations', o.response_id),
      type: 'ObservationsRecorded',
      data: {
        response_id: o.response_id,
        website_id: o.website_id,
        prompt_id: o.prompt_id,
        location_id: o.location_id,
        schedule_id: o.schedule_id,
        model: o.model,
        observed_at: o.observed_at,
        extractor: o.extractor,
        observations: o.observations.map((x, j) => ({ observation_id: deterministicId('observation', o.response_id, String(j)), ...x })),
      },
    },
  ];
  if (o.credits) {
    events.push({
      id: deterministicId('judge-credits', o.response_id),
      type: 'CreditsUsed',
      data: { website_id: o.website_id, ...o.credits, run_id: null, response_id: o.response_id, purpose: 'observation_judge' },
    });
  }
  return events;
}

export const observationsStream = (responseId: string) => `observations-${responseId}`;

/** Appends to the answer's observations stream; false when they were already recorded. */
export async function recordObservations(ctx: CommandContext, o: Observed): Promise<boolean> {
  try {
    const r = await ctx.store.append(
      observationsStream(o.response_id),
      newEventsFor({ ...ctx, websiteId: o.website_id }, decideObservations(o)),
      'no_stream',
    );
    return !r.noop;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return false;
    throw err;
  }
}

/** The observations of one import call's answers: one stream, so the worker appends them at once. */
export const importObservationsStream = (importId: string) => `observations-import-${importId}`;

/** Appends many answers' observations in one append (ids as decideObservations gives them); false when done before. */
export async function recordObservationsBatch(ctx: CommandContext, streamId: string, all: Observed[]): Promise<boolean> {
  try {
    const r = await ctx.store.append(streamId, newEventsFor(ctx, all.flatMap(decideObservations)), 'no_stream');
    return !r.noop;
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return false;
    throw err;
  }
}
