import { CrawledPages, CrawlerActivity } from '../../../queries/crawlers/views';
import { CrawledPagesInput, CrawlerActivityInput, getCrawledPages, getCrawlerActivity } from '../../app/crawlers';
import { READS, tool, type ToolDef } from '../tool';

/** AI crawler analytics: the same reads as GET /api/v1/crawlers/activity and /api/v1/crawlers/pages. */
export const crawlersTools: ToolDef[] = [
  tool({
    name: 'get_crawler_activity',
    title: 'Get AI crawler activity',
    description:
      'Which AI crawlers fetch the site: hits, distinct pages and last visit per bot (or per day, path, status); verified by IP range by default.',
    annotations: READS,
    input: CrawlerActivityInput,
    output: CrawlerActivity,
    handler: (ctx, input) => getCrawlerActivity(ctx, input),
  }),
  tool({
    name: 'get_crawled_pages',
    title: 'Get crawled pages',
    description: 'Pages crawled by verified AI bots joined with the answers citing them; only=crawled_not_cited or cited_not_crawled shows the gaps.',
    annotations: READS,
    input: CrawledPagesInput,
    output: CrawledPages,
    handler: (ctx, input) => getCrawledPages(ctx, input),
  }),
];
