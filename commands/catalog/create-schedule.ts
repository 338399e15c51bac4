import { z } from 'zod';
import { type DomainError, invalid } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import { MODEL_COUNT, modelIdSchema } from '../../src/domain/models';
import { text } from '../../src/domain/schemas';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { Bool, Day, Name, WebsiteId } from './catalog-input';

export const ScheduleModels = z
  .array(modelIdSchema, { error: 'must be an array of model identifiers' })
  .min(1, 'must list at least one model')
  .max(MODEL_COUNT, `must have at most ${MODEL_COUNT} items`)
  .refine((ms) => new Set(ms).size === ms.length, 'must not repeat a model');
const FREQUENCY_ERROR = "must be 'daily' or 'weekly'";
/** a string first, so a missing value reads 'frequency is required' */
export const Frequency = text(FREQUENCY_ERROR)
  .pipe(z.enum(['daily', 'weekly'], { error: FREQUENCY_ERROR }))
  .meta({ enum: ['daily', 'weekly'] });

const SAMPLES_ERROR = 'must be an integer from 1 to 10';
/** How many times a run asks each (prompt, model, location, persona): each sample is an answer of its own. */
export const SamplesPerPrompt = z.number({ error: SAMPLES_ERROR }).int(SAMPLES_ERROR).min(1, SAMPLES_ERROR).max(10, SAMPLES_ERROR);

export const CreateSchedule = z.strictObject({
  website_id: WebsiteId,
  name: Name.describe("The schedule's name (up to 200 characters)"),
  models: ScheduleModels.describe(`Model identifiers asked on each run (1 to ${MODEL_COUNT}, no repeats)`),
  /** first and last UTC day it fires; null or omitted = unbounded on that side */
  starts_on: Day.nullable().optional().describe('First UTC day it fires, YYYY-MM-DD; null or omitted = unbounded'),
  ends_on: Day.nullable().optional().describe('Last UTC day it fires, YYYY-MM-DD (not before starts_on); null or omitted = unbounded'),
  frequency: Frequency.describe("'daily' or 'weekly'"),
  is_active: Bool.optional().describe('Whether it fires (default true); an active schedule does not fire outside starts_on..ends_on'),
  samples_per_prompt: SamplesPerPrompt.optional().describe(
    'How many times each run asks each prompt, model and location (1 to 10, default 1); each sample is an answer of its own',
  ),
});
export type CreateSchedule = z.infer<typeof CreateSchedule>;

/** ends_on before starts_on (plain `YYYY-MM-DD` strings order like the days they name). */
export function windowError(starts_on: string | null, ends_on: string | null): DomainError | null {
  return starts_on !== null && ends_on !== null && ends_on < starts_on ? invalid('ends_on: must not be before starts_on') : null;
}

export function decideCreateSchedule(_s: CatalogState, cmd: CreateSchedule & { schedule_id: string }): Decision<Written> | DomainError {
  const data = {
    schedule_id: cmd.schedule_id,
    name: cmd.name,
    models: cmd.models,
    starts_on: cmd.starts_on ?? null,
    ends_on: cmd.ends_on ?? null,
    frequency: cmd.frequency,
    is_active: cmd.is_active ?? true,
    samples_per_prompt: cmd.samples_per_prompt ?? 1,
  };
  const bad = windowError(data.starts_on, data.ends_on);
  if (bad) return bad;
  return { events: [{ type: 'PromptScheduleCreated', data }], result: { id: data.schedule_id } };
}

export function createSchedule(ctx: CommandContext, input: CreateSchedule) {
  const schedule_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreateSchedule(s, { ...input, schedule_id }));
}
