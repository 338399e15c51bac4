import { type DomainEvent, type EventData, RESPONSE_STREAM_PREFIX } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';
import type { AnswerResult } from '../../src/engines/port';
import {
  type AppendOutcome,
  appendMany,
  type EventStore,
  type NewEvent,
  type Position,
  type StreamAppend,
  WrongExpectedRevisionError,
} from '../../src/eventstore/port';
import { type CommandContext, newEventsFor } from '../handle';
import { decideObservations, type Observed } from './record-observations';
import { cutText } from '../../src/domain/text';

export type Requested = EventData<'ResponseRequested'>;

export type Outcome =
  | { kind: 'answered'; answer: AnswerResult; run_at: string }
  | { kind: 'failed'; error_kind: string; message: string; attempts: number | null };

/** The answer of a unit of work has an id derived from the unit: a redelivered unit records nothing twice. */
export const responseIdOf = (requestId: string) => deterministicId('response', requestId);
export const responseStream = (responseId: string) => `${RESPONSE_STREAM_PREFIX}${responseId}`;

/**
 * A unit's outcome: its answer with the credits it used, or its failure. Both share one event id, so a unit gets one
 * outcome whatever happens to the messages that carry it.
 */
export function decideOutcome(req: Requested, outcome: Outcome): (DomainEvent & { id: string })[] {
  const id = deterministicId('outcome', req.request_id);
  if (outcome.kind === 'failed') {
    return [
      {
        id,
        type: 'ResponseFailed',
        data: {
          request_id: req.request_id,
          run_id: req.run_id,
          website_id: req.website_id,
          prompt_id: req.prompt_id,
          model: req.model,
          location_id: req.location_id,
          error_kind: outcome.error_kind,
          message: cutText(outcome.message, 2000),
          attempts: outcome.attempts,
        },
      },
    ];
  }
  const a = outcome.answer;
  const response_id = responseIdOf(req.request_id);
  return [
    {
      id,
      type: 'ResponseRecorded',
      data: {
        response_id,
        website_id: req.website_id,
        prompt_id: req.prompt_id,
        model: req.model,
        location_id: req.location_id,
        persona_id: req.persona_id,
        schedule_id: req.schedule_id,
        run_id: req.run_id,
        request_id: req.request_id,
        external_id: null,
        run_at: outcome.run_at,
        text: a.text,
        citations: a.citations,
        products: a.products.map((p) => ({ ...p })),
        source: 'engine',
        observations_supplied: false,
        provider_model: a.provider_model,
        latency_ms: a.latency_ms,
        ...(a.retrieved?.length ? { retrieved: a.retrieved } : {}),
        ...(a.search_queries?.length ? { search_queries: a.search_queries } : {}),
        ...(req.sample_index !== undefined && { sample_index: req.sample_index }),
      },
    },
    {
      id: deterministicId('credits', req.request_id),
      type: 'CreditsUsed',
      data: {
        website_id: req.website_id,
        model: req.model,
        credits: a.usage.credits,
        input_tokens: a.usage.input_tokens ?? null,
        output_tokens: a.usage.output_tokens ?? null,
        run_id: req.run_id,
        response_id,
        purpose: 'response',
      },
    },
  ];
}

/**
 * The outcome's append to the answer's own stream (expected: no stream yet). `observe` finds the answer's observations
 * there and then: they go in the same append (the answer and what it says are recorded together).
 */
export function outcomeAppend(
  ctx: CommandContext,
  req: Requested,
  outcome: Outcome,
  observe?: (recorded: EventData<'ResponseRecorded'>) => Observed | null,
): StreamAppend {
  const decided = decideOutcome(req, outcome);
  const first = decided[0];
  if (observe && first.type === 'ResponseRecorded') {
    const o = observe(first.data);
    if (o) decided.push(...decideObservations(o));
  }
  return {
    streamId: responseStream(responseIdOf(req.request_id)),
    events: newEventsFor({ ...ctx, websiteId: req.website_id }, decided),
    expected: 'no_stream',
  };
}

/** An outcome's append as it went: recorded (false when the unit already had one), or the error the store gave. */
export type OutcomeRecorded = { ok: true; recorded: boolean; position: Position | null; events: NewEvent[] } | { ok: false; error: unknown };

/**
 * Appends outcomes, each to its answer's own stream: one alone through the store's append (its commit batching),
 * several in one appendMany. A unit that already had an outcome is `recorded: false`.
 */
export async function recordOutcomes(store: EventStore, appends: readonly StreamAppend[]): Promise<OutcomeRecorded[]> {
  const outcomes: AppendOutcome[] =
    appends.length === 1
      ? [
          await store.append(appends[0].streamId, appends[0].events, appends[0].expected).then(
            (result): AppendOutcome => ({ ok: true, result }),
            (error): AppendOutcome => ({ ok: false, error }),
          ),
        ]
      : await appendMany(store, [...appends]);
  return outcomes.map((o, i) => {
    const events = appends[i].events;
    if (o.ok) return { ok: true, recorded: !o.result.noop, position: o.result.position, events };
    if (o.error instanceof WrongExpectedRevisionError) return { ok: true, recorded: false, position: null, events };
    return { ok: false, error: o.error };
  });
}
