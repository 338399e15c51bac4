import { z } from 'zod';
import { StartPromptDiscovery } from '../../../commands/discovery/discovery';
import { DiscoveryAcceptView, DiscoveryRunAnswer, DiscoveryRunsView } from '../../../queries/discovery/views';
import { AcceptDiscovered, acceptDiscovered, DiscoveryRunsQuery, listPromptDiscoveryRuns, startPromptDiscovery } from '../../app/discovery';
import { routeGroup, Uuid } from '../route';

const api = routeGroup({ tag: 'prompt discovery', extension: true });

/** Prompt discovery runs: thin adapters over src/app/discovery.ts. */
export const discoveryRoutes = [
  api.post('/api/v1/prompt-discovery/runs', {
    summary:
      'Start a prompt discovery run (a job): suggestions from website_analysis, keyword_gaps and brand_guidelines; social and search_console are listed as unavailable',
    body: StartPromptDiscovery,
    status: 201,
    answer: DiscoveryRunAnswer,
    handler: (ctx) => startPromptDiscovery(ctx, ctx.body),
  }),
  api.get('/api/v1/prompt-discovery/runs', {
    summary: "A website's prompt discovery runs, newest first (limit 1 to 20, default 10)",
    query: DiscoveryRunsQuery,
    answer: DiscoveryRunsView,
    handler: (ctx) => listPromptDiscoveryRuns(ctx, ctx.query),
  }),
  api.post('/api/v1/prompt-discovery/runs/:run_id/accept', {
    summary: "Make prompts of a finished run's suggestions, by index (accepting one again answers the prompt it made)",
    params: z.object({ run_id: Uuid }),
    body: AcceptDiscovered,
    answer: DiscoveryAcceptView,
    handler: (ctx) => acceptDiscovered(ctx, ctx.params.run_id, ctx.body),
  }),
];
