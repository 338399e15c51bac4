import { z } from 'zod';
import { conflict, type DomainError, notFound } from '../../src/domain/errors';
import type { DomainEvent, EventData } from '../../src/domain/events';
import { MODEL_COUNT } from '../../src/domain/models';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { Bool, Day, NewName, sameList, somethingToChange, WebsiteId } from './catalog-input';
import { Frequency, SamplesPerPrompt, ScheduleModels, windowError } from './create-schedule';

export const UpdateSchedule = z
  .strictObject({
    website_id: WebsiteId,
    name: NewName,
    models: ScheduleModels.optional().describe(`Replaces the model identifiers (1 to ${MODEL_COUNT}, no repeats); omitted = unchanged`),
    starts_on: Day.nullable().optional().describe('First UTC day it fires, YYYY-MM-DD; null = unbounded; omitted = unchanged'),
    ends_on: Day.nullable().optional().describe('Last UTC day it fires, YYYY-MM-DD; null = unbounded; omitted = unchanged'),
    frequency: Frequency.optional().describe("'daily' or 'weekly'; omitted = unchanged"),
    is_active: Bool.optional().describe('Whether it fires; omitted = unchanged'),
    samples_per_prompt: SamplesPerPrompt.optional().describe(
      'How many times each run asks each prompt, model and location (1 to 10); omitted = unchanged',
    ),
    /** archiving is final: the schedule stays listed and queryable, and no longer changes */
    archived: z
      .literal(true, { error: 'must be true (archiving cannot be undone)' })
      .optional()
      .describe('true archives it, for good: it stays listed and queryable and can no longer change'),
  })
  .refine(...somethingToChange(['name', 'models', 'starts_on', 'ends_on', 'frequency', 'is_active', 'samples_per_prompt', 'archived']));
export type UpdateSchedule = z.infer<typeof UpdateSchedule>;

export const SCHEDULE_NOT_FOUND = 'Prompt schedule not found';

export function decideUpdateSchedule(s: CatalogState, scheduleId: string, cmd: UpdateSchedule): Decision<Written> | DomainError {
  const x = s.schedules.get(scheduleId);
  if (!x) return notFound(SCHEDULE_NOT_FOUND);
  const { website_id: _w, archived, ...edits } = cmd;
  if (x.archived) {
    const editsSomething = Object.values(edits).some((v) => v !== undefined);
    return editsSomething ? conflict('Prompt schedule is archived') : { events: [], result: { id: x.id } };
  }
  const changes: Omit<EventData<'PromptScheduleUpdated'>, 'schedule_id'> = {};
  if (edits.name !== undefined && edits.name !== x.name) changes.name = edits.name;
  if (edits.models !== undefined && !sameList(edits.models, x.models)) changes.models = edits.models;
  if (edits.starts_on !== undefined && edits.starts_on !== x.starts_on) changes.starts_on = edits.starts_on;
  if (edits.ends_on !== undefined && edits.ends_on !== x.ends_on) changes.ends_on = edits.ends_on;
  if (edits.frequency !== undefined && edits.frequency !== x.frequency) changes.frequency = edits.frequency;
  if (edits.is_active !== undefined && edits.is_active !== x.is_active) changes.is_active = edits.is_active;
  if (edits.samples_per_prompt !== undefined && edits.samples_per_prompt !== (x.samples_per_prompt ?? 1))
    changes.samples_per_prompt = edits.samples_per_prompt;
  const next = { ...x, ...changes, archived: archived === true };
  const bad = windowError(next.starts_on, next.ends_on);
  if (bad) return bad;
  const events: DomainEvent[] = [];
  if (Object.keys(changes).length) events.push({ type: 'PromptScheduleUpdated', data: { schedule_id: x.id, ...changes } });
  if (archived) events.push({ type: 'PromptScheduleArchived', data: { schedule_id: x.id } });
  return { events, result: { id: x.id } };
}

export function updateSchedule(ctx: CommandContext, input: UpdateSchedule & { schedule_id: string }) {
  const { schedule_id, ...change } = input;
  return handleCatalog(ctx, input.website_id, (s) => decideUpdateSchedule(s, schedule_id, change));
}
