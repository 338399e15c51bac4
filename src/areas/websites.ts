import { websitesProjection } from '../../projections/websites';
import { websiteRoutes } from '../http/routes/websites';
import { websiteTools } from '../mcp/tools/websites';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Websites: creation, external ids, pause, resume, delete. */
export const websites: AreaManifest<'websites'> = {
  readModels: { websites: websitesProjection },
  routes: websiteRoutes,
  tools: websiteTools,
  feed: {
    WebsiteCreated: (e) => entry('website', 'created', [e.data.website_id], e.data.website_id),
    WebsiteExternalIdSet: (e) => entry('website', 'updated', [e.data.website_id], e.data.website_id),
    WebsiteStatusChanged: (e) => entry('website', e.data.status === 'active' ? 'resumed' : e.data.status, [e.data.website_id], e.data.website_id),
  },
};
