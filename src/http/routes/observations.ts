import { type RouteDef, routeGroup } from '../route';
import { ObservationPage } from '../../../queries/observations/views';
import { listObservations, ObservationsBody } from '../../app/observations';

const api = routeGroup({ tag: 'observations' });

/** The observations area's REST routes. */
export const observationsRoutes: RouteDef<any, any, any>[] = [
  api.post('/api/v1/attributes/observations', {
    summary:
      'Attribute observations (statements answers made about the brand or a competitor for one attribute), strongest wording first (sort intensity) or newest first (sort recent)',
    body: ObservationsBody,
    answer: ObservationPage,
    handler: (ctx) => listObservations(ctx, ctx.body),
  }),
];
