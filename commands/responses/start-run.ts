import { z } from 'zod';
import { type DomainError, conflict, invalid, isDomainError, notFound } from '../../src/domain/errors';
import type { DomainEvent, RunTrigger } from '../../src/domain/events';
import { deterministicId, newId } from '../../src/domain/ids';
import { MODEL_IDS } from '../../src/domain/models';
import { WebsiteId } from '../../src/domain/schemas';
import { ScheduleSelection } from '../../src/domain/filters';
import { WrongExpectedRevisionError, type Position } from '../../src/eventstore/port';
import { Catalog, type CatalogState, catalogStream, isLivePrompt } from '../catalog/catalog';
import { type CommandContext, load, newEventsFor } from '../handle';
import { endRun, type SlotTaken, takeRunSlot } from './run-slot';

export const StartRun = z.strictObject({
  website_id: WebsiteId,
  /** optional: the default schedule when omitted */
  schedule_id: ScheduleSelection.optional().describe(
    "The schedule whose models are asked: 'default' (when omitted; alias 'manual') or a schedule id",
  ),
});
export type StartRun = z.output<typeof StartRun>;

export const SCHEDULE_NOT_FOUND = 'Schedule not found';
/** units one run may hold (prompts x models x locations x samples) */
export const MAX_RUN_UNITS = 25_000;

export interface RunPlan {
  run_id: string;
  website_id: string;
  schedule_id: string | null;
  trigger: RunTrigger;
  day: string;
  models: string[];
  total: number;
  samples_per_prompt?: number;
}

export interface StartRunInput {
  run_id: string;
  website_id: string;
  schedule_id: string | null;
  trigger: RunTrigger;
  /** the UTC day the run measures */
  day: string;
  /** backfill: the answers' time (null = when each is answered) */
  run_at?: string | null;
}

/**
 * The run's units: the website's active prompts x the schedule's models (all models for `default`) x its locations
 * (one unit without a location when it has none). Unit ids derive from the run, so a retried start writes nothing new.
 */
export function decideStartRun(s: CatalogState, cmd: StartRunInput): { events: (DomainEvent & { id: string })[]; result: RunPlan } | DomainError {
  let models: string[] = [...MODEL_IDS];
  let samples = 1;
  if (cmd.schedule_id !== null) {
    const schedule = s.schedules.get(cmd.schedule_id);
    if (!schedule) return notFound(SCHEDULE_NOT_FOUND);
    if (schedule.archived) return conflict('Schedule is archived');
    models = [...schedule.models];
    samples = schedule.samples_per_prompt ?? 1;
  }
  const prompts = [...s.prompts.values()].filter((p) => isLivePrompt(p) && p.status === 'active');
  if (prompts.length === 0) return invalid('website_id: the website has no active prompts to run');
  const locations: (string | null)[] = s.locations.size ? [...s.locations.keys()] : [null];
  const total = prompts.length * models.length * locations.length * samples;
  if (total > MAX_RUN_UNITS)
    return invalid(
      `website_id: a run may hold at most ${MAX_RUN_UNITS} units (active prompts x models x locations x samples); this one would hold ${total}`,
    );
  const result: RunPlan = {
    run_id: cmd.run_id,
    website_id: cmd.website_id,
    schedule_id: cmd.schedule_id,
    trigger: cmd.trigger,
    day: cmd.day,
    models,
    total,
    ...(samples > 1 && { samples_per_prompt: samples }),
  };
  const events: (DomainEvent & { id: string })[] = [{ id: deterministicId('run-started', cmd.run_id), type: 'RunStarted', data: { ...result } }];
  for (const p of prompts) {
    for (const location_id of locations) {
      for (const model of models) {
        for (let sample = 0; sample < samples; sample++) {
          // sample 0 keeps the id a unit had before samples existed
          const request_id =
            sample === 0
              ? deterministicId('request', cmd.run_id, p.id, model, location_id ?? '')
              : deterministicId('request', cmd.run_id, p.id, model, location_id ?? '', String(sample));
          events.push({
            id: request_id,
            type: 'ResponseRequested',
            data: {
              request_id,
              run_id: cmd.run_id,
              website_id: cmd.website_id,
              prompt_id: p.id,
              model,
              location_id,
              persona_id: null,
              schedule_id: cmd.schedule_id,
              day: cmd.day,
              run_at: cmd.run_at ?? null,
              ...(samples > 1 && { sample_index: sample }),
            },
          });
        }
      }
    }
  }
  return { events, result };
}

export const runStream = (runId: string) => `run-${runId}`;

/** What a start did: the run's id, whether this call wrote it (false: a run with this id was already started), its units. */
export interface RunStart {
  run_id: string;
  started: boolean;
  units: number;
}

export interface RunContext extends CommandContext {
  /**
   * Whether a run has an outcome for every unit (the runs read model says so). When the run holding the slot has,
   * its end is recorded first and the slot is free: a start never waits for the worker that records ends.
   */
  runFinished?: (runId: string) => Promise<boolean>;
}

/**
 * Plans the run on the website's catalogue, takes its schedule's slot (one run in progress per schedule, decided on
 * the slot's stream: 409 naming the run that holds it), then writes the run with its units in one append to its
 * own stream. A backfill (history the system writes for past days) takes no slot.
 */
export async function startRun(
  ctx: RunContext,
  input: Omit<StartRunInput, 'run_id'> & { run_id?: string },
): Promise<{ result: RunStart; position: Position | null } | DomainError> {
  const cmd: StartRunInput = { ...input, run_id: input.run_id ?? newId() };
  const { state } = await load(ctx.store, catalogStream(cmd.website_id), Catalog);
  const d = decideStartRun(state, cmd);
  if (isDomainError(d)) return d;
  const notStarted = { result: { run_id: cmd.run_id, started: false, units: d.result.total }, position: null };
  if (cmd.trigger !== 'backfill') {
    const slot = await claimSlot(ctx, cmd);
    if (isDomainError(slot)) return slot;
    // this run ran and ended already (a scheduler pass behind the read model): nothing to write
    if (slot === 'ended') return notStarted;
  }
  try {
    const r = await ctx.store.append(runStream(cmd.run_id), newEventsFor({ ...ctx, websiteId: cmd.website_id }, d.events), 'no_stream');
    return { result: { ...notStarted.result, started: !r.noop }, position: r.position };
  } catch (err) {
    if (err instanceof WrongExpectedRevisionError) return notStarted;
    throw err;
  }
}

async function claimSlot(ctx: RunContext, cmd: StartRunInput): Promise<SlotTaken | DomainError> {
  const finished = ctx.runFinished;
  const ref = { website_id: cmd.website_id, schedule_id: cmd.schedule_id };
  let r = await takeRunSlot(ctx, ref, cmd.run_id);
  const holder = isDomainError(r) && r.kind === 'conflict' ? (r.details?.run as { run_id: string } | undefined)?.run_id : undefined;
  if (holder && finished && (await finished(holder))) {
    await endRun(ctx, ref, holder, 'finished');
    r = await takeRunSlot(ctx, ref, cmd.run_id);
  }
  return isDomainError(r) ? r : r.result;
}
