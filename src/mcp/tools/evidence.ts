import { z } from 'zod';
import { SearchQueryList, SourcePage } from '../../../queries/evidence/views';
import * as evidence from '../../app/evidence';
import { toolDateSchema } from '../../domain/dates';
import { ModelList } from '../../domain/filters';
import { idOf, PageNum, PageSize, WebsiteId } from '../../domain/schemas';
import { READS, tool } from '../tool';

/** The website and the UTC days both tools read. */
const period = { website_id: WebsiteId, start_date: toolDateSchema('start').optional(), end_date: toolDateSchema('end').optional() };

/** The answer evidence tools: the same operations as the REST routes (src/app/evidence.ts). */
export const evidenceTools = [
  tool({
    name: 'get_sources',
    title: 'Get retrieved and cited sources',
    annotations: READS,
    description:
      'Per domain or URL: answers that retrieved it, answers that cited it, cited_when_retrieved and its entity. Read-but-not-cited pages are the nearest opportunities.',
    input: z.strictObject({
      ...period,
      models: ModelList.optional().describe('Only answers of these model identifiers; omitted = every model'),
      group_by: z
        .enum(['domain', 'url'], { error: "must be 'domain' or 'url'" })
        .default('domain')
        .describe("'domain' (default) or 'url' (normalized)"),
      page_num: PageNum(),
      page_size: PageSize(),
    }),
    output: SourcePage,
    handler: (ctx, i) =>
      evidence.getSources(
        ctx,
        { website_id: i.website_id, start: i.start_date, end: i.end_date, models: i.models, groupBy: i.group_by },
        { page_num: i.page_num, page_size: i.page_size },
      ),
  }),
  tool({
    name: 'get_search_queries',
    title: 'Get the queries engines searched',
    annotations: READS,
    description:
      "The web searches the engines ran to answer the website's prompts (their fan-out), most answers first, with models and first and last seen.",
    input: z.strictObject({
      ...period,
      prompt_id: idOf('prompt').optional(),
    }),
    output: SearchQueryList,
    handler: (ctx, i) => evidence.getSearchQueries(ctx, { website_id: i.website_id, start: i.start_date, end: i.end_date, promptId: i.prompt_id }),
  }),
];
