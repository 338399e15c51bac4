import { StartPromptDiscovery } from '../../../commands/discovery/discovery';
import { DiscoveryRunAnswer, DiscoveryRunsView } from '../../../queries/discovery/views';
import { DiscoveryRunsQuery, listPromptDiscoveryRuns, startPromptDiscovery } from '../../app/discovery';
import { tool, READS } from '../tool';

/** Prompt discovery for assistants, with REST's rules (src/app/discovery.ts). */
export const discoveryTools = [
  tool({
    name: 'start_prompt_discovery',
    title: 'Start prompt discovery',
    description:
      "Start a run in which the writer suggests prompts to track (25 to 50 by default) from the chosen sources: the site's pages, keyword gaps, brand guidelines. Poll get_prompt_discovery_runs for them.",
    input: StartPromptDiscovery,
    output: DiscoveryRunAnswer,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (ctx, input) => startPromptDiscovery(ctx, input),
  }),
  tool({
    name: 'get_prompt_discovery_runs',
    title: 'Get prompt discovery runs',
    description: "A website's prompt discovery runs, newest first, with their status and suggested prompts; limit 1 to 20 (default 10).",
    input: DiscoveryRunsQuery,
    output: DiscoveryRunsView,
    annotations: READS,
    handler: (ctx, input) => listPromptDiscoveryRuns(ctx, input),
  }),
];
