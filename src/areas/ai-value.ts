import { aiValueProjection } from '../../projections/ai-value';
import { aiValueRoutes } from '../http/routes/ai-value';
import { aiValueTools } from '../mcp/tools/ai-value';
import { aiValueJob, startAiValueScheduler } from '../workers/ai-value';
import { entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** AI search value: topic economics and the value computed from them. */
export const aiValue: AreaManifest<'ai-value'> = {
  readModels: { 'ai-value': aiValueProjection },
  routes: aiValueRoutes,
  tools: aiValueTools,
  jobs: { aivalue: { requested: 'AiValueRequested', spec: () => aiValueJob() } },
  feed: {
    TopicEconomicsSet: entryOf('topic', 'updated', (e) => [e.data.topic_id]),
    AiValueComputed: entryOf('ai_search_value', 'computed', (e) => [e.data.job_id]),
  },
  notInFeed: [{ why: "the computation's request: its result is the entry", types: ['AiValueRequested'] }],
  workers: [{ start: ({ config, db, store, logger, now }) => (config.scheduler ? startAiValueScheduler({ db, store, logger, now }) : null) }],
};
