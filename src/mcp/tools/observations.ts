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
      'What AI answers say about the brand or a competitor on an attribute (a trait such as price): praise or criticism, score -1 to 1 (null: unscored), the text. filters.start_date is required.',
    input: ToolObservationsInput,
    output: ObservationPage,
    handler: (ctx, input) => listObservations(ctx, input),
  }),
];
