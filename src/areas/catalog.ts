import { catalogProjection } from '../../projections/catalog';
import { catalogRoutes } from '../http/routes/catalog';
import { catalogSettingsRoutes } from '../http/routes/catalog-settings';
import { catalogTools } from '../mcp/tools/catalog';
import { affected, entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** The catalogue: competitors, topics, prompts, personas, locations, schedules, saved views, attributes. */
export const catalog: AreaManifest<'catalog'> = {
  readModels: { catalog: catalogProjection },
  routes: [...catalogRoutes, ...catalogSettingsRoutes],
  tools: catalogTools,
  feed: {
    CompetitorAdded: entryOf('competitor', 'created', (e) => [e.data.competitor_id]),
    TopicCreated: entryOf('topic', 'created', (e) => [e.data.topic_id]),
    PromptCreated: entryOf('prompt', 'created', (e) => [e.data.prompt_id]),
    CompetitorRenamed: entryOf('competitor', 'updated', (e) => [e.data.competitor_id]),
    CompetitorIdentifiersChanged: entryOf('competitor', 'updated', (e) => [e.data.competitor_id]),
    CompetitorRemoved: entryOf('competitor', 'deleted', (e) => [e.data.competitor_id]),
    TopicDeleted: entryOf('topic', 'deleted', (e) => affected(e.data.topic_id, e.data.soft_deleted_prompt_ids)),
    TopicRestored: entryOf('topic', 'restored', (e) => affected(e.data.topic_id, e.data.restored_prompt_ids)),
    PromptUpdated: entryOf('prompt', 'updated', (e) => [e.data.prompt_id]),
    PromptDeleted: entryOf('prompt', 'deleted', (e) => [e.data.prompt_id]),
    PersonaCreated: entryOf('persona', 'created', (e) => [e.data.persona_id]),
    LocationCreated: entryOf('location', 'created', (e) => [e.data.location_id]),
    PromptScheduleCreated: entryOf('prompt_schedule', 'created', (e) => [e.data.schedule_id]),
    PromptScheduleUpdated: entryOf('prompt_schedule', 'updated', (e) => [e.data.schedule_id]),
    PromptScheduleArchived: entryOf('prompt_schedule', 'archived', (e) => [e.data.schedule_id]),
    SavedViewCreated: entryOf('saved_view', 'created', (e) => [e.data.view_id]),
    SavedViewUpdated: entryOf('saved_view', 'updated', (e) => [e.data.view_id]),
    AttributeCreated: entryOf('attribute', 'created', (e) => [e.data.attribute_id]),
  },
  notInFeed: [{ why: "a prompt's first answer is a run's outcome, not a change of the prompt", types: ['PromptAnswered'] }],
};
