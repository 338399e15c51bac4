import { pitchesProjection } from '../../projections/pitches';
import { pitchRoutes } from '../http/routes/pitches';
import { pitchesTools } from '../mcp/tools/pitches';
import { pitchJob } from '../workers/pitch';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Pitch reports (organization-level). */
export const pitches: AreaManifest<'pitches'> = {
  readModels: { pitches: pitchesProjection },
  routes: pitchRoutes,
  tools: pitchesTools,
  jobs: { pitch: { requested: 'PitchRequested', spec: (deps) => pitchJob(deps) } },
  feed: {
    PitchRequested: entryOf('pitch', 'created', (e) => [e.data.job_id], null),
    PitchReportCompiled: entryOf('pitch', 'completed', (e) => [e.data.job_id], null),
  },
  notInFeed: [
    {
      why: "a report's steps: its request and its report are the entries",
      types: ['PitchSiteResearched', 'PitchPlanWritten', 'PitchAnswersRecorded'],
    },
  ],
};
