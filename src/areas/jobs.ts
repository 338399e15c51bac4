import { jobsProjection } from '../../projections/jobs';
import { entriesOf, entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Job kinds whose failure is a feed entry of their own entity type (pitches are organization-level: mapped apart). */
const FAILURES_SHOWN: Record<string, string> = { seo: 'seo_recommendation_job', discovery: 'prompt_discovery_run' };

/** Every job's lifecycle; each kind is its area's. */
export const jobs: AreaManifest<'jobs'> = {
  readModels: { jobs: (all) => jobsProjection(all.jobKinds) },
  feed: {
    JobFailed: entriesOf(['pitch.failed', ...Object.values(FAILURES_SHOWN).map((t) => `${t}.failed`)], (e) => {
      if (e.data.kind === 'pitch') return entry('pitch', 'failed', [e.data.job_id], null);
      // the jobs whose start and end the feed shows: their failure too (the website from the job's metadata)
      const entity_type = FAILURES_SHOWN[e.data.kind];
      return entity_type ? entry(entity_type, 'failed', [e.data.job_id]) : null;
    }),
  },
  notInFeed: [{ why: "a job's start and success: its area's own events show its progress", types: ['JobStarted', 'JobSucceeded'] }],
};
