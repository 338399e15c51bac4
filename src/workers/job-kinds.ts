import type { Knex } from 'knex';
import type { Engines } from '../engines/registry';
import type { Outbound } from '../net/safe-fetch';
import { aiValueJob } from './ai-value';
import { contentJob } from './content';
import { discoveryJob } from './discovery';
import type { JobSpec } from './jobs';
import { pillarResearchJob } from './pillar-research';
import { pitchJob } from './pitch';
import { probeJob } from './probe';
import { seoJob } from './seo';

/**
 * What a kind's steps reach besides their job's stream: the read models, the answer engines, the safe outbound
 * fetcher, the deployment's choices.
 */
export interface JobKindDeps {
  db: Knex;
  engines: Engines;
  outbound: Outbound;
  pitchModels: readonly string[];
  contentModel: string;
  now?: () => Date;
}

/** The kinds of job every instance runs: an area adds its spec here, beside its line in src/domain/jobs.ts. */
export const jobSpecs = (deps: JobKindDeps): JobSpec<any>[] => [
  probeJob(),
  aiValueJob(),
  pillarResearchJob({ outbound: deps.outbound }),
  seoJob(deps),
  discoveryJob({ db: deps.db, engines: deps.engines, contentModel: deps.contentModel, now: deps.now }),
  pitchJob(deps),
  contentJob({ engines: deps.engines, model: deps.contentModel, fetch: deps.outbound.fetch, now: deps.now }),
];
