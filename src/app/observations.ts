import { z } from 'zod';
import { resolveSelection } from '../../queries/filters';
import * as listQueries from '../../queries/observations/list';
import { checkTargets, type ObservationRequest, observationTargets } from '../../queries/observations/list';
import { Ids, ObservationFilters, ToolObservationFilters } from '../domain/filters';
import type { Need } from '../domain/principal';
import { PageNum, PageSize, WebsiteId } from '../domain/schemas';
import { type Caller, dbOf, websiteFor } from './context';

export const MAX_OBSERVATION_IDS = 100;

/** The request body of POST /api/v1/attributes/observations, with the REST or the tool form of its filters. */
const observationsRequest = <F extends typeof ObservationFilters | typeof ToolObservationFilters>(filters: F) =>
  z.strictObject({
    website_id: WebsiteId,
    filters,
    entity_ids: Ids(MAX_OBSERVATION_IDS)
      .optional()
      .describe(`Entities to report (at most ${MAX_OBSERVATION_IDS}): website_id for the brand, otherwise competitor ids; omitted = every entity`),
    attribute_ids: Ids(MAX_OBSERVATION_IDS)
      .optional()
      .describe(`Attributes to report (at most ${MAX_OBSERVATION_IDS}); omitted = every active attribute`),
    positive: z.boolean({ error: 'must be a boolean' }).optional().describe('true: praise only; false: criticism only; omitted = both'),
    sort: z
      .enum(['intensity', 'recent'], { error: "must be 'intensity' or 'recent'" })
      .default('intensity')
      .describe("'intensity' (default): strongest wording first (a null score counts as 1); 'recent': newest first"),
    page_num: PageNum(),
    page_size: PageSize(),
  });

export const ObservationsBody = observationsRequest(ObservationFilters);
export const ToolObservationsInput = observationsRequest(ToolObservationFilters);
export type ObservationsBody = z.output<typeof ObservationsBody>;

const VIEW: Need = { category: 'analytics', level: 'view' };

/** The observations area as REST routes and MCP tools both run it. */

/** A page of attribute observations: access, the shared filters (saved view included), entity/attribute/direction. */
export async function listObservations(c: Caller, input: ObservationsBody) {
  const db = dbOf(c);
  const w = await websiteFor(c, input.website_id, VIEW);
  const [selection, targets] = await Promise.all([resolveSelection(db, w.id, input.filters, { prefix: 'filters' }), observationTargets(db, w)]);
  const request: ObservationRequest = {
    entity_ids: input.entity_ids,
    attribute_ids: input.attribute_ids,
    positive: input.positive,
    sort: input.sort,
    page_num: input.page_num,
    page_size: input.page_size,
  };
  checkTargets(targets, request);
  return listQueries.listObservations(db, selection, targets, request);
}
