import type { Projection } from '../src/eventstore/projection';
import { activityProjection } from './activity';
import { allowancesProjection } from './allowances';
import { answersProjection } from './answers';
import { catalogProjection } from './catalog';
import { jobsProjection } from './jobs';
import { emailsProjection } from './emails';
import { observationsProjection } from './observations';
import { organizationsProjection } from './organizations';
import { runsProjection } from './runs';
import { websitesProjection } from './websites';

/** Every read model, in the order they are started. */
export const readModels: Projection[] = [organizationsProjection, websitesProjection, catalogProjection, activityProjection, answersProjection, runsProjection, observationsProjection, jobsProjection, allowancesProjection, emailsProjection];
