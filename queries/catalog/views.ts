import { z } from 'zod';
import { catalogue } from '../../src/domain/events';

/** The catalogue read model's rows as the API answers them: the one description each (query, route, tool, tests). */

/** Each row is its creating event's fields under `id` (plus what the read model adds). */
export const Competitor = z.object({ id: z.string(), ...catalogue.CompetitorAdded.omit({ competitor_id: true }).shape });
export type Competitor = z.infer<typeof Competitor>;

export const Topic = z.object({ id: z.string(), name: z.string() });
export type Topic = z.infer<typeof Topic>;
/** A topic as listed: with how many live prompts it holds. */
export const ListedTopic = Topic.extend({ prompt_count: z.number() });
export type ListedTopic = z.infer<typeof ListedTopic>;

export const Prompt = z.object({ id: z.string(), ...catalogue.PromptCreated.omit({ prompt_id: true }).shape, created_at: z.string() });
export type Prompt = z.infer<typeof Prompt>;

export const Persona = z.object({ id: z.string(), name: z.string(), description: z.string().nullable() });
export type Persona = z.infer<typeof Persona>;

export const Location = z.object({ id: z.string(), ...catalogue.LocationCreated.omit({ location_id: true }).shape });
export type Location = z.infer<typeof Location>;

export const Attribute = z.object({ id: z.string(), name: z.string(), description: z.string().nullable() });
export type Attribute = z.infer<typeof Attribute>;

export const PromptSchedule = z.object({
  id: z.string(),
  ...catalogue.PromptScheduleCreated.omit({ schedule_id: true }).shape,
  samples_per_prompt: z.number(),
  archived: z.boolean(),
});
export type PromptSchedule = z.infer<typeof PromptSchedule>;

export const SavedView = z.object({ id: z.string(), name: z.string(), filters: z.record(z.string(), z.unknown()) });
export type SavedView = z.infer<typeof SavedView>;

/** An entry of the model catalogue (not a read model: infra/models.json). */
export const ModelEntry = z.object({ id: z.string(), label: z.string(), shopping: z.boolean() });

/** The answers that carry them (REST responses and MCP outputSchemas alike). */
const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });
export const Answers = {
  competitors: z.object({ competitors: z.array(Competitor) }),
  competitor: z.object({ competitor: Competitor }),
  topics: list(ListedTopic),
  topicCreated: z.object({ topic: Topic, restored: z.boolean() }),
  topicDeleted: z.object({ success: z.literal(true), name: z.string(), deleted_prompt_count: z.number().int() }),
  prompts: list(Prompt),
  prompt: z.object({ prompt: Prompt }),
  promptDeleted: z.object({ success: z.literal(true), soft_deleted: z.boolean() }),
  personas: list(Persona),
  persona: z.object({ persona: Persona }),
  locations: list(Location),
  location: Location,
  attributes: list(Attribute),
  attribute: z.object({ attribute: Attribute }),
  schedules: list(PromptSchedule),
  schedule: z.object({ schedule: PromptSchedule }),
  savedViews: list(SavedView),
  savedView: z.object({ view: SavedView }),
  models: list(ModelEntry),
  success: z.object({ success: z.literal(true) }),
};
