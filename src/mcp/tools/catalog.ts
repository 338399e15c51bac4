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
import { byId, READS, REPLACES, tool, websiteCreate, websiteRead } from '../tool';

/** The catalogue tools: the same operations (access, command or query, read-your-writes) as the REST routes. */
const withId = (name: string, what: string) => z.object({ website_id: WebsiteId, [name]: idOf(what) }).strict();

export const catalogTools = [
  // competitors
  websiteRead({
    name: 'list_competitors',
    title: 'List competitors',
    description: "The website's competitors: id, name, url, normalized_url, identifiers.",
    output: Answers.competitors,
    read: catalog.listCompetitors,
  }),
  websiteCreate({
    name: 'add_competitor',
    title: 'Add a competitor',
    description: "Add a competitor (name, url, optional identifiers: other names it goes by). Not the website's own URL or a page below it.",
    input: AddCompetitor,
    output: Answers.competitor,
    create: catalog.addCompetitor,
  }),
  byId({
    name: 'update_competitor',
    title: 'Update a competitor',
    annotations: REPLACES,
    description: 'Rename a competitor and/or replace its identifiers.',
    id: 'competitor_id',
    of: 'competitor',
    body: UpdateCompetitor,
    output: Answers.competitor,
    call: catalog.updateCompetitor,
  }),
  tool({
    name: 'remove_competitor',
    title: 'Remove a competitor',
    annotations: REPLACES,
    description: 'Remove a competitor from the website.',
    input: withId('competitor_id', 'competitor'),
    output: Answers.success,
    handler: (ctx, input) => catalog.removeCompetitor(ctx, input.website_id, input.competitor_id as string),
  }),

  // topics
  websiteRead({
    name: 'list_topics',
    title: 'List topics',
    description: "The website's topics (soft-deleted ones left out) with how many live prompts each holds.",
    output: Answers.topics,
    read: catalog.listTopics,
  }),
  websiteCreate({
    name: 'create_topic',
    title: 'Create a topic',
    description:
      'Create a topic. Re-creating the name of a soft-deleted topic (case-insensitive) restores it with the prompts deleted together with it; restored tells which happened.',
    input: CreateTopic,
    output: Answers.topicCreated,
    create: catalog.createTopic,
  }),
  tool({
    name: 'delete_topic',
    title: 'Delete a topic',
    annotations: REPLACES,
    description:
      'Soft-delete a topic. With delete_prompts true its active prompts are soft-deleted too; otherwise they stay active with their history.',
    input: DeleteTopic,
    output: Answers.topicDeleted,
    handler: (ctx, input) => catalog.deleteTopic(ctx, input),
  }),

  // prompts
  websiteRead({
    name: 'list_prompts',
    title: 'List prompts',
    description: "The website's prompts, active and paused (soft-deleted ones left out): id, text, topic_id, type, status, tags, created_at.",
    output: Answers.prompts,
    read: catalog.listPrompts,
  }),
  websiteCreate({
    name: 'create_prompt',
    title: 'Create a prompt',
    description:
      'Create a prompt: text, optional topic_id, type (branded or non_branded, default non_branded), status (active or paused, default active), tags.',
    input: CreatePrompt,
    output: Answers.prompt,
    create: catalog.createPrompt,
  }),
  byId({
    name: 'update_prompt',
    title: 'Update a prompt',
    annotations: REPLACES,
    description: "Change a prompt's text, topic_id (null = no topic), type, status or tags.",
    id: 'prompt_id',
    of: 'prompt',
    body: UpdatePrompt,
    output: Answers.prompt,
    call: catalog.updatePrompt,
  }),
  tool({
    name: 'delete_prompt',
    title: 'Delete a prompt',
    annotations: REPLACES,
    description:
      'Delete a prompt: soft-deleted (soft_deleted true) when it already has answers, which keep counting in history; hard-deleted otherwise.',
    input: withId('prompt_id', 'prompt'),
    output: Answers.promptDeleted,
    handler: (ctx, input) => catalog.deletePrompt(ctx, input.website_id, input.prompt_id as string),
  }),

  // personas, locations, attributes
  websiteRead({
    name: 'list_personas',
    title: 'List personas',
    description: "The website's personas.",
    output: Answers.personas,
    read: catalog.listPersonas,
  }),
  websiteCreate({
    name: 'create_persona',
    title: 'Create a persona',
    description: 'Create a persona (name, optional description).',
    input: CreatePersona,
    output: Answers.persona,
    create: catalog.createPersona,
  }),
  websiteRead({
    name: 'list_locations',
    title: 'List locations',
    description: "The website's locations: id, location, country, region, city. Their ids go in filters.location_ids.",
    output: Answers.locations,
    read: catalog.listLocations,
  }),
  websiteCreate({
    name: 'create_location',
    title: 'Create a location',
    description: 'Create a location: location (display name), country, optional region and city.',
    input: CreateLocation,
    output: Answers.location,
    create: catalog.createLocation,
  }),
  websiteRead({
    name: 'list_attributes',
    title: 'List attributes',
    description: "The website's attributes: the traits AI answers are watched for (price, support, ...).",
    output: Answers.attributes,
    read: catalog.listAttributes,
  }),
  websiteCreate({
    name: 'create_attribute',
    title: 'Create an attribute',
    description: 'Create an attribute (a trait to watch) with an optional description; names are unique per website.',
    input: CreateAttribute,
    output: Answers.attribute,
    create: catalog.createAttribute,
  }),

  // prompt schedules
  websiteRead({
    name: 'get_prompt_schedules',
    title: 'List prompt schedules',
    description:
      "The website's prompt schedules, `default` first, then custom ones (starts_on/ends_on UTC days, null = unbounded). Ids go in filters.schedule_id; archived ones stay queryable.",
    output: Answers.schedules,
    read: catalog.listSchedules,
  }),
  websiteCreate({
    name: 'create_prompt_schedule',
    title: 'Create a prompt schedule',
    description:
      'Create a custom schedule: name, models (model identifiers), optional starts_on and ends_on (YYYY-MM-DD, UTC), frequency daily or weekly.',
    input: CreateSchedule,
    output: Answers.schedule,
    create: catalog.createSchedule,
  }),
  byId({
    name: 'update_prompt_schedule',
    title: 'Update or archive a prompt schedule',
    annotations: REPLACES,
    description: 'Edit a custom schedule (name, models, starts_on, ends_on, frequency, is_active), or archive it with archived: true (final).',
    id: 'schedule_id',
    of: 'prompt schedule',
    body: UpdateSchedule,
    output: Answers.schedule,
    call: catalog.updateSchedule,
  }),

  // saved views
  websiteRead({
    name: 'list_saved_views',
    title: 'List saved views',
    description:
      "The website's saved views: id, name and the filters as stored (some, such as models_not, metrics cannot reproduce and refuse unless overridden).",
    output: Answers.savedViews,
    read: catalog.listSavedViews,
  }),
  websiteCreate({
    name: 'create_saved_view',
    title: 'Create a saved view',
    description: 'Save a view: name and filters (stored as given).',
    input: CreateSavedView,
    output: Answers.savedView,
    create: catalog.createSavedView,
  }),
  byId({
    name: 'update_saved_view',
    title: 'Update a saved view',
    annotations: REPLACES,
    description: 'Rename a saved view and/or replace its filters; the id stays.',
    id: 'view_id',
    of: 'saved view',
    body: UpdateSavedView,
    output: Answers.savedView,
    call: catalog.updateSavedView,
  }),

  // models
  tool({
    name: 'list_models',
    title: 'List model identifiers',
    annotations: READS,
    description: 'The model identifiers every models filter accepts, with their label and whether the shopping metrics accept them.',
    input: z.object({}).strict(),
    output: Answers.models,
    handler: async () => catalog.listModels(),
  }),
];
