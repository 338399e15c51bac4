import { observationsProjection } from '../../projections/observations';
import { observationsRoutes } from '../http/routes/observations';
import { observationsTools } from '../mcp/tools/observations';
import type { AreaManifest } from './manifest';

/** Observations read in answers. */
export const observations: AreaManifest<'observations'> = {
  readModels: { observations: observationsProjection },
  routes: observationsRoutes,
  tools: observationsTools,
  notInFeed: [{ why: 'what an answer says: part of the answer, not a change', types: ['ObservationsRecorded'] }],
};
