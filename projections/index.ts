import type { Projection } from '../src/eventstore/projection';
import { activityProjection } from './activity';
import { catalogProjection } from './catalog';
import { organizationsProjection } from './organizations';
import { websitesProjection } from './websites';

/** Every read model, in the order they are started. */
export const readModels: Projection[] = [organizationsProjection, websitesProjection, catalogProjection, activityProjection];
