import { answersProjection } from '../../projections/answers';
import { runsProjection } from '../../projections/runs';
import { responseRoutes } from '../http/routes/responses';
import { responseTools } from '../mcp/tools/responses';
import { entriesOf, entry, entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Runs and their answers, imports of answers. */
export const responses: AreaManifest<'answers' | 'runs'> = {
  readModels: { answers: answersProjection, runs: runsProjection },
  routes: responseRoutes,
  tools: responseTools,
  feed: {
    RunStarted: entryOf('run', 'started', (e) => [e.data.run_id]),
    RunEnded: entriesOf(['run.finished', 'run.expired'], (e) => entry('run', e.data.reason, [e.data.run_id])),
    ResponsesImported: entryOf('response', 'imported', (e) => (e.data.response_ids.length <= 100 ? e.data.response_ids : null)),
  },
  notInFeed: [
    {
      why: "a run's units and answers: the run's start and end stand for them",
      types: ['RunSlotTaken', 'ResponseRequested', 'ResponseRecorded', 'ResponseFailed'],
    },
  ],
};
