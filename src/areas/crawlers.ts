import { crawlersProjection } from '../../projections/crawlers';
import { crawlersRoutes } from '../http/routes/crawlers';
import { crawlersTools } from '../mcp/tools/crawlers';
import type { AreaManifest } from './manifest';

/** AI crawler analytics: access logs in, verified crawler activity and crawled-versus-cited pages out. */
export const crawlers: AreaManifest<'crawlers'> = {
  readModels: { crawlers: crawlersProjection },
  routes: crawlersRoutes,
  tools: crawlersTools,
  notInFeed: [
    { why: 'a batch of access-log lines, thousands per import: the activity read is the record, not the feed', types: ['CrawlerHitsImported'] },
  ],
};
