import { catalogProjection } from '../../projections/catalog';
import { catalogRoutes } from '../http/routes/catalog';
import { catalogSettingsRoutes } from '../http/routes/catalog-settings';
import { catalogTools } from '../mcp/tools/catalog';
import { affected, entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** The catalogue: competitors, topics, prompts, personas, locations, schedules, saved views, attributes. */
export const catalog: AreaManifest<'catalog'> = {
  readModels: { catalog: catalogProjection },
  routes: [...catalogRoutes, ...catalogSettingsRoutes],
  tools: catalogTools,
  feed: {
    CompetitorAdded: (e) => entry('competitor', 'created', [e.data.competitor_id]),
    TopicCreated: (e) => entry('topic', 'created', [e.data.topic_id]),
    PromptCreated: (e) => entry('prompt', 'created', [e.data.prompt_id]),
    CompetitorRenamed: (e) => entry('competitor', 'updated', [e.data.competitor_id]),
    CompetitorIdentifiersChanged: (e) => entry('competitor', 'updated', [e.data.competitor_id]),
    CompetitorRemoved: (e) => entry('competitor', 'deleted', [e.data.competitor_id]),
    TopicDeleted: (e) => entry('topic', 'deleted', affected(e.data.topic_id, e.data.soft_deleted_prompt_ids)),
    TopicRestored: (e) => entry('topic', 'restored', affected(e.data.topic_id, e.data.restored_prompt_ids)),
    PromptUpdated: (e) => entry('prompt', 'updated', [e.data.prompt_id]),
    PromptDeleted: (e) => entry('prompt', 'deleted', [e.data.prompt_id]),
    PersonaCreated: (e) => entry('persona', 'created', [e.data.persona_id]),
    LocationCreated: (e) => entry('location', 'created', [e.data.location_id]),
    PromptScheduleCreated: (e) => entry('prompt_schedule', 'created', [e.data.schedule_id]),
    PromptScheduleUpdated: (e) => entry('prompt_schedule', 'updated', [e.data.schedule_id]),
    PromptScheduleArchived: (e) => entry('prompt_schedule', 'archived', [e.data.schedule_id]),
    SavedViewCreated: (e) => entry('saved_view', 'created', [e.data.view_id]),
    SavedViewUpdated: (e) => entry('saved_view', 'updated', [e.data.view_id]),
    AttributeCreated: (e) => entry('attribute', 'created', [e.data.attribute_id]),
  },
  notInFeed: [{ why: "a prompt's first answer is a run's outcome, not a change of the prompt", types: ['PromptAnswered'] }],
};
