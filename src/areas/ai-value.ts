import { aiValueProjection } from '../../projections/ai-value';
import { aiValueRoutes } from '../http/routes/ai-value';
import { aiValueTools } from '../mcp/tools/ai-value';
import { aiValueJob, startAiValueScheduler } from '../workers/ai-value';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** AI search value: topic economics and the value computed from them. */
export const aiValue: AreaManifest<'ai-value'> = {
  readModels: { 'ai-value': aiValueProjection },
  routes: aiValueRoutes,
  tools: aiValueTools,
  jobs: { aivalue: { requested: 'AiValueRequested', spec: () => aiValueJob() } },
  feed: {
    TopicEconomicsSet: (e) => entry('topic', 'updated', [e.data.topic_id]),
    AiValueComputed: (e) => entry('ai_search_value', 'computed', [e.data.job_id]),
  },
  notInFeed: [{ why: "the computation's request: its result is the entry", types: ['AiValueRequested'] }],
  workers: [{ start: ({ config, db, store, logger, now }) => (config.scheduler ? startAiValueScheduler({ db, store, logger, now }) : null) }],
};
