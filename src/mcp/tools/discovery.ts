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
      "Start a run that suggests prompts to track: website_id, name and at least one source of website_analysis (the site's pages), social, search_console, keyword_gaps (prompts where competitors are named and the brand is not), brand_guidelines (needs non-empty custom_instructions). Defaults: locale en-US, country United States, 25 to 50 prompts. social and search_console need connections aivis lacks: the run lists them in unavailable_sources. The writer proposes the prompts from the sources' material; a run that cannot reach prompt_count_min fails, its error saying why. Poll get_prompt_discovery_runs for the suggestions.",
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
