import { z } from 'zod';
import { AddCompetitor } from '../../../commands/catalog/add-competitor';
import { CreateAttribute } from '../../../commands/catalog/create-attribute';
import { CreateLocation } from '../../../commands/catalog/create-location';
import { CreatePersona } from '../../../commands/catalog/create-persona';
import { CreatePrompt } from '../../../commands/catalog/create-prompt';
import { CreateSavedView } from '../../../commands/catalog/create-saved-view';
import { CreateSchedule } from '../../../commands/catalog/create-schedule';
import { CreateTopic } from '../../../commands/catalog/create-topic';
import { DeleteTopic } from '../../../commands/catalog/delete-topic';
import { UpdateCompetitor } from '../../../commands/catalog/update-competitor';
import { UpdatePrompt } from '../../../commands/catalog/update-prompt';
import { UpdateSavedView } from '../../../commands/catalog/update-saved-view';
import { UpdateSchedule } from '../../../commands/catalog/update-schedule';
import { Answers } from '../../../queries/catalog/views';
import * as catalog from '../../app/catalog';
import { idOf, WebsiteId } from '../../domain/schemas';
import { tool } from '../tool';

/** The catalogue tools: the same operations (access, command or query, read-your-writes) as the REST routes. */
const OfWebsite = z.object({ website_id: WebsiteId }).strict();
const withId = (name: string, what: string) => z.object({ website_id: WebsiteId, [name]: idOf(what) }).strict();

export const catalogTools = [
  // competitors
  tool({
    name: 'list_competitors',
    title: 'List competitors',
    annotations: { readOnlyHint: true },
    description: "The website's competitors: id, name, url, normalized_url, identifiers.",
    input: OfWebsite,
    output: Answers.competitors,
    handler: (ctx, input) => catalog.listCompetitors(ctx, input.website_id),
  }),
  tool({
    name: 'add_competitor',
    title: 'Add a competitor',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: "Add a competitor (name, url, optional identifiers: other names it goes by). Not the website's own URL or a page below it.",
    input: AddCompetitor,
    output: Answers.competitor,
    handler: (ctx, input) => catalog.addCompetitor(ctx, input),
  }),
  tool({
    name: 'update_competitor',
    title: 'Update a competitor',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: 'Rename a competitor and/or replace its identifiers.',
    input: UpdateCompetitor.safeExtend({ competitor_id: idOf('competitor') }),
    output: Answers.competitor,
    handler: (ctx, { competitor_id, ...input }) => catalog.updateCompetitor(ctx, competitor_id, input),
  }),
  tool({
    name: 'remove_competitor',
    title: 'Remove a competitor',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: 'Remove a competitor from the website.',
    input: withId('competitor_id', 'competitor'),
    output: Answers.success,
    handler: (ctx, input) => catalog.removeCompetitor(ctx, input.website_id, input.competitor_id as string),
  }),

  // topics
  tool({
    name: 'list_topics',
    title: 'List topics',
    annotations: { readOnlyHint: true },
    description: "The website's topics (soft-deleted ones left out) with how many live prompts each holds.",
    input: OfWebsite,
    output: Answers.topics,
    handler: (ctx, input) => catalog.listTopics(ctx, input.website_id),
  }),
  tool({
    name: 'create_topic',
    title: 'Create a topic',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Create a topic. Re-creating the name of a soft-deleted topic (case-insensitive) restores it with the prompts deleted together with it; restored tells which happened.',
    input: CreateTopic,
    output: Answers.topicCreated,
    handler: (ctx, input) => catalog.createTopic(ctx, input),
  }),
  tool({
    name: 'delete_topic',
    title: 'Delete a topic',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      'Soft-delete a topic. delete_prompts false (default): its prompts stay active and keep their history. delete_prompts true: every active prompt in it is soft-deleted too. Answers success, name, deleted_prompt_count.',
    input: DeleteTopic,
    output: Answers.topicDeleted,
    handler: (ctx, input) => catalog.deleteTopic(ctx, input),
  }),

  // prompts
  tool({
    name: 'list_prompts',
    title: 'List prompts',
    annotations: { readOnlyHint: true },
    description: "The website's prompts, active and paused (soft-deleted ones left out): id, text, topic_id, type, status, tags, created_at.",
    input: OfWebsite,
    output: Answers.prompts,
    handler: (ctx, input) => catalog.listPrompts(ctx, input.website_id),
  }),
  tool({
    name: 'create_prompt',
    title: 'Create a prompt',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Create a prompt: text, optional topic_id, type (branded or non_branded, default non_branded), status (active or paused, default active), tags.',
    input: CreatePrompt,
    output: Answers.prompt,
    handler: (ctx, input) => catalog.createPrompt(ctx, input),
  }),
  tool({
    name: 'update_prompt',
    title: 'Update a prompt',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: "Change a prompt's text, topic_id (null = no topic), type, status or tags.",
    input: UpdatePrompt.safeExtend({ prompt_id: idOf('prompt') }),
    output: Answers.prompt,
    handler: (ctx, { prompt_id, ...input }) => catalog.updatePrompt(ctx, prompt_id, input),
  }),
  tool({
    name: 'delete_prompt',
    title: 'Delete a prompt',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description:
      'Delete a prompt: soft-deleted (soft_deleted true) when it already has answers, which keep counting in history; hard-deleted otherwise.',
    input: withId('prompt_id', 'prompt'),
    output: Answers.promptDeleted,
    handler: (ctx, input) => catalog.deletePrompt(ctx, input.website_id, input.prompt_id as string),
  }),

  // personas, locations, attributes
  tool({
    name: 'list_personas',
    title: 'List personas',
    annotations: { readOnlyHint: true },
    description: "The website's personas.",
    input: OfWebsite,
    output: Answers.personas,
    handler: (ctx, input) => catalog.listPersonas(ctx, input.website_id),
  }),
  tool({
    name: 'create_persona',
    title: 'Create a persona',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Create a persona (name, optional description).',
    input: CreatePersona,
    output: Answers.persona,
    handler: (ctx, input) => catalog.createPersona(ctx, input),
  }),
  tool({
    name: 'list_locations',
    title: 'List locations',
    annotations: { readOnlyHint: true },
    description: "The website's locations: id, location, country, region, city. Their ids go in filters.location_ids.",
    input: OfWebsite,
    output: Answers.locations,
    handler: (ctx, input) => catalog.listLocations(ctx, input.website_id),
  }),
  tool({
    name: 'create_location',
    title: 'Create a location',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Create a location: location (display name), country, optional region and city.',
    input: CreateLocation,
    output: Answers.location,
    handler: (ctx, input) => catalog.createLocation(ctx, input),
  }),
  tool({
    name: 'list_attributes',
    title: 'List attributes',
    annotations: { readOnlyHint: true },
    description: "The website's attributes: the traits AI answers are watched for (price, support, ...).",
    input: OfWebsite,
    output: Answers.attributes,
    handler: (ctx, input) => catalog.listAttributes(ctx, input.website_id),
  }),
  tool({
    name: 'create_attribute',
    title: 'Create an attribute',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Create an attribute (a trait to watch) with an optional description; names are unique per website.',
    input: CreateAttribute,
    output: Answers.attribute,
    handler: (ctx, input) => catalog.createAttribute(ctx, input),
  }),

  // prompt schedules
  tool({
    name: 'get_prompt_schedules',
    title: 'List prompt schedules',
    annotations: { readOnlyHint: true },
    description:
      "The website's prompt schedules: `default` first (starts_on and ends_on null), then custom ones with starts_on/ends_on (UTC days, null = unbounded), is_active, archived, models, frequency. Archived schedules stay listed and queryable.",
    input: OfWebsite,
    output: Answers.schedules,
    handler: (ctx, input) => catalog.listSchedules(ctx, input.website_id),
  }),
  tool({
    name: 'create_prompt_schedule',
    title: 'Create a prompt schedule',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description:
      'Create a custom schedule: name, models (model identifiers), optional starts_on and ends_on (YYYY-MM-DD, UTC), frequency daily or weekly.',
    input: CreateSchedule,
    output: Answers.schedule,
    handler: (ctx, input) => catalog.createSchedule(ctx, input),
  }),
  tool({
    name: 'update_prompt_schedule',
    title: 'Update or archive a prompt schedule',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: 'Edit a custom schedule (name, models, starts_on, ends_on, frequency, is_active), or archive it with archived: true (final).',
    input: UpdateSchedule.safeExtend({ schedule_id: idOf('prompt schedule') }),
    output: Answers.schedule,
    handler: (ctx, { schedule_id, ...input }) => catalog.updateSchedule(ctx, schedule_id, input),
  }),

  // saved views
  tool({
    name: 'list_saved_views',
    title: 'List saved views',
    annotations: { readOnlyHint: true },
    description:
      "The website's saved views: id, name and the filters as stored (some, such as models_not, metrics cannot reproduce and refuse unless overridden).",
    input: OfWebsite,
    output: Answers.savedViews,
    handler: (ctx, input) => catalog.listSavedViews(ctx, input.website_id),
  }),
  tool({
    name: 'create_saved_view',
    title: 'Create a saved view',
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    description: 'Save a view: name and filters (stored as given).',
    input: CreateSavedView,
    output: Answers.savedView,
    handler: (ctx, input) => catalog.createSavedView(ctx, input),
  }),
  tool({
    name: 'update_saved_view',
    title: 'Update a saved view',
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    description: 'Rename a saved view and/or replace its filters; the id stays.',
    input: UpdateSavedView.safeExtend({ view_id: idOf('saved view') }),
    output: Answers.savedView,
    handler: (ctx, { view_id, ...input }) => catalog.updateSavedView(ctx, view_id, input),
  }),

  // models
  tool({
    name: 'list_models',
    title: 'List model identifiers',
    annotations: { readOnlyHint: true },
    description: 'The model identifiers every models filter accepts, with their label and whether the shopping metrics accept them.',
    input: z.object({}).strict(),
    output: Answers.models,
    handler: async () => catalog.listModels(),
  }),
];
