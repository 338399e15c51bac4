import type { Projection } from '../src/eventstore/projection';
import { activityProjection } from './activity';
import { aiValueProjection } from './ai-value';
import { allowancesProjection } from './allowances';
import { answersProjection } from './answers';
import { catalogProjection } from './catalog';
import { jobsProjection } from './jobs';
import { knowledgeProjection } from './knowledge';
import { emailsProjection } from './emails';
import { observationsProjection } from './observations';
import { organizationsProjection } from './organizations';
import { pitchesProjection } from './pitches';
import { runsProjection } from './runs';
import { teamProjection } from './team';
import { websitesProjection } from './websites';
import { creditsProjection } from './credits';
import { seoProjection } from './seo';
import { discoveryProjection } from './discovery';
import { contentProjection } from './content';

/** Every read model by its name, in the order they are started. */
const byName = {
  organizations: organizationsProjection,
  websites: websitesProjection,
  catalog: catalogProjection,
  activity: activityProjection,
  answers: answersProjection,
  runs: runsProjection,
  observations: observationsProjection,
  jobs: jobsProjection,
  allowances: allowancesProjection,
  emails: emailsProjection,
  team: teamProjection,
  'ai-value': aiValueProjection,
  knowledge: knowledgeProjection,
  credits: creditsProjection,
  seo: seoProjection,
  discovery: discoveryProjection,
  pitches: pitchesProjection,
  content: contentProjection,
} satisfies Record<string, Projection>;

/** A read model's name: what a write names when it waits for the read models its caller reads next. */
export type ReadModelName = keyof typeof byName;

export const readModels: Projection[] = Object.entries(byName).map(([name, p]) => {
  if (p.name !== name) throw new Error(`projection ${p.name} is indexed as ${name}`);
  return p;
});
