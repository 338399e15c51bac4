import { CrawledPages, CrawlerActivity, CrawlerImportView } from '../../../queries/crawlers/views';
import { CrawledPagesInput, CrawlerActivityInput, CrawlerLogQuery, getCrawledPages, getCrawlerActivity, importCrawlerLogs } from '../../app/crawlers';
import { type RouteDef, routeGroup } from '../route';

const api = routeGroup({ tag: 'crawlers', extension: true });

/** AI crawler analytics (docs/api/crawlers.md). */
export const crawlersRoutes: RouteDef<any, any, any>[] = [
  api.post('/api/v1/crawler-logs', {
    summary:
      "Import a raw access log (format combined, json for Cloudflare Logpush or Vercel, cloudfront), streamed, gzip accepted (Content-Encoding: gzip), up to 1 GiB. AI-crawler lines are counted per bot, verified against the operators' published IP ranges; a line imported before adds nothing; malformed lines are counted as rejected.",
    query: CrawlerLogQuery,
    streamedBody: { description: 'the raw log, one request per line (any content type; Content-Encoding: gzip accepted)' },
    answer: CrawlerImportView,
    handler: (ctx) =>
      importCrawlerLogs(ctx, ctx.query, ctx.req.raw, {
        encoding: ctx.req.headers['content-encoding'],
        length: ctx.req.headers['content-length'],
      }),
  }),
  api.get('/api/v1/crawlers/activity', {
    summary:
      'AI crawler hits per bot (or per bot and day, path or status): hits, distinct pages, last visit; verified hits by default (verification=unverified shows spoofed agents).',
    query: CrawlerActivityInput,
    answer: CrawlerActivity,
    handler: (ctx) => getCrawlerActivity(ctx, ctx.query),
  }),
  api.get('/api/v1/crawlers/pages', {
    summary:
      "The website's pages crawled by verified AI bots joined with the answers citing them in the period; only=crawled_not_cited or cited_not_crawled for the gaps.",
    query: CrawledPagesInput,
    answer: CrawledPages,
    handler: (ctx) => getCrawledPages(ctx, ctx.query),
  }),
];
