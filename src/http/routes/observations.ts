import { z } from 'zod';
import type { RouteDef } from '../route';
import { route } from '../route';
import { ObservationsBody, observationOps } from './observations-ops';

const Observation = z.object({
  observation_id: z.string(),
  response_id: z.string(),
  entity_id: z.string(),
  entity_name: z.string(),
  is_website: z.boolean(),
  attribute_id: z.string(),
  attribute_name: z.string(),
  positive: z.boolean(),
  score: z.number().nullable(),
  text_span: z.string(),
  model: z.string(),
  created_at: z.string(),
});

/** The observations area's REST routes. */
export const observationsRoutes: RouteDef<any, any, any>[] = [
  route({
    method: 'POST',
    url: '/api/v1/attributes/observations',
    summary:
      'Attribute observations (statements answers made about the brand or a competitor for one attribute), strongest wording first (sort intensity) or newest first (sort recent)',
    tag: 'observations',
    body: ObservationsBody,
    responses: { 200: z.object({ data: z.array(Observation), page_num: z.number(), page_size: z.number(), has_more: z.boolean() }) },
    handler: (ctx) => observationOps.listObservations(ctx, ctx.body),
  }),
];
