import { ObservationPage } from '../../../queries/observations/views';
import { listObservations, ToolObservationsInput } from '../../app/observations';
import { tool, type ToolDef, READS } from '../tool';

/** The observations area's MCP tools: the same operation as the REST route (src/app/observations.ts). */
export const observationsTools: ToolDef[] = [
  tool({
    name: 'get_attribute_observations',
    title: 'Get attribute observations',
    annotations: READS,
    description:
      "Attribute observations: statements AI answers made about the brand (entity_id = website_id) or a competitor for one attribute (a trait such as price or support), each with positive (praise or criticism), score (-1 to 1, magnitude = strength of wording; null when never scored), the supporting text_span, the model and the answer's time. filters (required): start_date (required), end_date (YYYY-MM-DD, ISO timestamps or spelled-out dates; a date end covers the whole day), schedule_id, saved_view_id, models, prompt_ids, location_ids, prompt_status, prompt_type; competitor_ids is not accepted (use entity_ids). entity_ids and attribute_ids (up to 100 each; omitted = all), positive (omitted = both), sort 'intensity' (default: strongest wording first; a null score counts as 1) or 'recent' (newest first), page_num from 0, page_size 1 to 100 (default 40).",
    input: ToolObservationsInput,
    output: ObservationPage,
    handler: (ctx, input) => listObservations(ctx, input),
  }),
];
