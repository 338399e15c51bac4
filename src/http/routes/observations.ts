import type { RouteDef } from '../route';
import { route } from '../route';
import { ObservationPage } from '../../../queries/observations/views';
import { listObservations, ObservationsBody } from '../../app/observations';

/** The observations area's REST routes. */
export const observationsRoutes: RouteDef<any, any, any>[] = [
  route({
    method: 'POST',
    url: '/api/v1/attributes/observations',
    summary:
      'Attribute observations (statements answers made about the brand or a competitor for one attribute), strongest wording first (sort intensity) or newest first (sort recent)',
    tag: 'observations',
    body: ObservationsBody,
    responses: { 200: ObservationPage },
    handler: (ctx) => listObservations(ctx, ctx.body),
  }),
];
