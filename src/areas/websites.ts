import { websitesProjection } from '../../projections/websites';
import { websiteRoutes } from '../http/routes/websites';
import { websiteTools } from '../mcp/tools/websites';
import { entriesOf, entry, entryOf } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Websites: creation, external ids, pause, resume, delete. */
export const websites: AreaManifest<'websites'> = {
  readModels: { websites: websitesProjection },
  routes: websiteRoutes,
  tools: websiteTools,
  feed: {
    WebsiteCreated: entryOf('website', 'created', (e) => [e.data.website_id], 'website_id'),
    WebsiteExternalIdSet: entryOf('website', 'updated', (e) => [e.data.website_id], 'website_id'),
    WebsiteStatusChanged: entriesOf(['website.resumed', 'website.paused', 'website.deleted'], (e) =>
      entry('website', e.data.status === 'active' ? 'resumed' : e.data.status, [e.data.website_id], e.data.website_id),
    ),
  },
};
