import { contentProjection } from '../../projections/content';
import { contentRoutes } from '../http/routes/content';
import { contentTools } from '../mcp/tools/content';
import { contentJob } from '../workers/content';
import { entryOf } from '../../projections/activity';
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
    ContentTracked: entryOf('content', 'created', (e) => [e.data.content_id], 'website_id'),
    ContentTitleChanged: entryOf('content', 'updated', (e) => [e.data.content_id], 'website_id'),
    ContentDeleted: entryOf('content', 'deleted', (e) => [e.data.content_id], 'website_id'),
    ContentSheetCreated: entryOf('content_sheet', 'created', (e) => [e.data.sheet_id], 'website_id'),
    ContentColumnCreated: entryOf('content_column', 'created', (e) => [e.data.column_id, e.data.sheet_id], 'website_id'),
    ContentColumnOptionsAdded: entryOf('content_column', 'updated', (e) => [e.data.column_id, e.data.sheet_id], 'website_id'),
    ContentGenerationRequested: entryOf('content', 'generation_requested', (e) => [e.data.content_id]),
    ContentBriefGenerated: entryOf('content', 'brief_generated', (e) => [e.data.content_id]),
    ContentBriefApproved: entryOf('content', 'brief_approved', (e) => [e.data.content_id]),
    ContentArticleGenerated: entryOf('content', 'generated', (e) => [e.data.content_id]),
    ContentReviewed: entryOf('content', 'optimized', (e) => [e.data.content_id]),
    ContentPublished: entryOf('content', 'published', (e) => [e.data.content_id]),
    ContentEdited: entryOf('content', 'edited', (e) => [e.data.content_id]),
    ContentRevised: entryOf('content', 'revised', (e) => [e.data.content_id]),
  },
  notInFeed: [
    {
      why: "bookkeeping of an item's URL and of its live page's text: the item's changes are the entries",
      types: ['ContentUrlsClaimed', 'ContentUrlReleased', 'ContentPageFetched'],
    },
  ],
};
