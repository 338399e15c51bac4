import { contentProjection } from '../../projections/content';
import { contentRoutes } from '../http/routes/content';
import { contentTools } from '../mcp/tools/content';
import { contentJob } from '../workers/content';
import { entry } from '../../projections/activity';
import type { AreaManifest } from './manifest';

/** Content items, sheets and columns, and the content pipeline. */
export const content: AreaManifest<'content'> = {
  readModels: { content: contentProjection },
  routes: contentRoutes,
  tools: contentTools,
  jobs: {
    content: {
      requested: 'ContentGenerationRequested',
      resumeOn: ['ContentBriefApproved', 'ContentDeleted'],
      spec: (deps) => contentJob({ engines: deps.engines, model: deps.contentModel, fetch: deps.outbound.fetch, now: deps.now }),
    },
  },
  feed: {
    ContentTracked: (e) => entry('content', 'created', [e.data.content_id], e.data.website_id),
    ContentTitleChanged: (e) => entry('content', 'updated', [e.data.content_id], e.data.website_id),
    ContentDeleted: (e) => entry('content', 'deleted', [e.data.content_id], e.data.website_id),
    ContentSheetCreated: (e) => entry('content_sheet', 'created', [e.data.sheet_id], e.data.website_id),
    ContentColumnCreated: (e) => entry('content_column', 'created', [e.data.column_id, e.data.sheet_id], e.data.website_id),
    ContentColumnOptionsAdded: (e) => entry('content_column', 'updated', [e.data.column_id, e.data.sheet_id], e.data.website_id),
    ContentGenerationRequested: (e) => entry('content', 'generation_requested', [e.data.content_id]),
    ContentBriefGenerated: (e) => entry('content', 'brief_generated', [e.data.content_id]),
    ContentBriefApproved: (e) => entry('content', 'brief_approved', [e.data.content_id]),
    ContentArticleGenerated: (e) => entry('content', 'generated', [e.data.content_id]),
    ContentReviewed: (e) => entry('content', 'optimized', [e.data.content_id]),
    ContentPublished: (e) => entry('content', 'published', [e.data.content_id]),
    ContentEdited: (e) => entry('content', 'edited', [e.data.content_id]),
    ContentRevised: (e) => entry('content', 'revised', [e.data.content_id]),
  },
  notInFeed: [
    {
      why: "bookkeeping of an item's URL and of its live page's text: the item's changes are the entries",
      types: ['ContentUrlsClaimed', 'ContentUrlReleased', 'ContentPageFetched'],
    },
  ],
};
