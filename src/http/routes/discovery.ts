import { z } from 'zod';
import { StartPromptDiscovery } from '../../../commands/discovery/discovery';
import { DiscoveryAcceptView, DiscoveryRunAnswer, DiscoveryRunsView } from '../../../queries/discovery/views';
import { AcceptDiscovered, acceptDiscovered, DiscoveryRunsQuery, listPromptDiscoveryRuns, startPromptDiscovery } from '../../app/discovery';
import { route, Uuid } from '../route';

const TAG = 'prompt discovery';

/** Prompt discovery runs: thin adapters over src/app/discovery.ts. */
export const discoveryRoutes = [
  route({
    method: 'POST',
    url: '/api/v1/prompt-discovery/runs',
    summary:
      'Start a prompt discovery run (a job): suggestions from website_analysis, keyword_gaps and brand_guidelines; social and search_console are listed as unavailable',
    tag: TAG,
    extension: true,
    body: StartPromptDiscovery,
    status: 201,
    responses: { 201: DiscoveryRunAnswer },
    handler: (ctx) => startPromptDiscovery(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/prompt-discovery/runs',
    summary: "A website's prompt discovery runs, newest first (limit 1 to 20, default 10)",
    tag: TAG,
    extension: true,
    query: DiscoveryRunsQuery,
    responses: { 200: DiscoveryRunsView },
    handler: (ctx) => listPromptDiscoveryRuns(ctx, ctx.query),
  }),
  route({
    method: 'POST',
    url: '/api/v1/prompt-discovery/runs/:run_id/accept',
    summary: "Make prompts of a finished run's suggestions, by index (accepting one again answers the prompt it made)",
    tag: TAG,
    extension: true,
    params: z.object({ run_id: Uuid }),
    body: AcceptDiscovered,
    responses: { 200: DiscoveryAcceptView },
    handler: (ctx) => acceptDiscovered(ctx, ctx.params.run_id, ctx.body),
  }),
];
