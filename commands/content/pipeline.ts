import { CONTENT_EVENT_TYPES, type ContentEvent, type ContentPipelineEvent, type EventData, exhaustive } from '../../src/domain/events';
import { CONTENT_NOT_FOUND, type ContentStage, type ContentType, contentStream, type PipelineStatus } from '../../src/domain/content';
import { deterministicId } from '../../src/domain/ids';
import type { Aggregate } from '../handle';
import { type ContentItemState, itemCreated } from './item';

export { CONTENT_NOT_FOUND, type ContentStage, contentStream, type PipelineStatus };
/** The types a generation makes. */
export const GENERATION_TYPES = ['generated', 'optimize', 'snipe', 'slice'] as const;
export type GenerationType = (typeof GENERATION_TYPES)[number];

/**
 * What the pipeline's deciders (approve, publish, edit, revise) and the content job know of one item, folded from its
 * stream `content-<id>`: the generation's request and progress, the current draft and its version, the publish.
 */
export interface ContentPipeline {
  content_id: string | null;
  /** the item exists (tracked or generated) and is not deleted */
  exists: boolean;
  /** deleted (a job still running on it stops) */
  deleted: boolean;
  type: ContentType | null;
  request: EventData<'ContentGenerationRequested'> | null;
  stage: ContentStage | null;
  pipeline_status: PipelineStatus | null;
  failure: string | null;
  brief: string | null;
  brief_approved: boolean;
  body: string | null;
  meta_description: string | null;
  /** optimize: the live page has been fetched (the review runs on it) */
  page_fetched: boolean;
  /** the latest version's number (0: none yet) */
  version_number: number;
  url: string | null;
  normalized_url: string | null;
  /** the first publish time */
  mark_as_done_time: string | null;
}

export const initialPipeline = (): ContentPipeline => ({
  content_id: null,
  exists: false,
  deleted: false,
  type: null,
  request: null,
  stage: null,
  pipeline_status: null,
  failure: null,
  brief: null,
  brief_approved: false,
  body: null,
  meta_description: null,
  page_fetched: false,
  version_number: 0,
  url: null,
  normalized_url: null,
  mark_as_done_time: null,
});

/** Where a generation request puts the item: its first stage, running, its URL without protocol (if any). */
const onRequest = (d: EventData<'ContentGenerationRequested'>) => ({
  stage: (d.type === 'optimize' ? 'pending' : 'pending_brief') as ContentStage,
  pipeline_status: 'running' as const,
  url: d.url ? stripProtocol(d.url) : null,
  // the citation join key from the publish on (an optimize draft is not the live page yet)
  normalized_url: null,
});

/** Pure: the item after one event of its stream (events of the item that the pipeline does not read leave it as it is). */
export function evolvePipeline(s: ContentPipeline, e: ContentEvent): ContentPipeline {
  switch (e.type) {
    case 'ContentGenerationRequested':
      return {
        ...s,
        content_id: e.data.content_id,
        exists: true,
        type: e.data.type,
        request: e.data,
        ...onRequest(e.data),
      };
    case 'ContentBriefGenerated':
      return { ...s, brief: e.data.brief, stage: 'generated_brief', version_number: e.data.version_number };
    case 'ContentBriefApproved':
      return s.stage === 'generated_brief' ? { ...s, brief_approved: true, stage: 'pending_article' } : { ...s, brief_approved: true };
    case 'ContentArticleGenerated':
      return { ...s, body: e.data.body, meta_description: e.data.meta_description, stage: 'generated', version_number: e.data.version_number };
    case 'ContentPageFetched':
      return { ...s, body: e.data.body, page_fetched: true, version_number: e.data.version_number };
    case 'ContentReviewed':
      return { ...s, body: e.data.body, meta_description: e.data.meta_description, version_number: e.data.version_number };
    case 'ContentEdited':
    case 'ContentRevised':
      return { ...s, body: e.data.body, version_number: e.data.version_number };
    case 'ContentPublished':
      return { ...s, url: e.data.url, normalized_url: e.data.normalized_url, stage: 'done', mark_as_done_time: e.data.published_at };
    case 'JobSucceeded':
      return e.data.kind === 'content' ? { ...s, pipeline_status: 'succeeded' } : s;
    case 'JobFailed':
      return e.data.kind === 'content' ? { ...s, pipeline_status: 'failed', stage: 'failed', failure: e.data.message } : s;
    default:
      return foldItemEvent(s, e);
  }
}

/** The content item's own events (tracking, delete), as far as the pipeline needs them: that it exists, its type, its URL. */
function foldItemEvent(s: ContentPipeline, e: Exclude<ContentEvent, ContentPipelineEvent>): ContentPipeline {
  switch (e.type) {
    case 'ContentTracked':
      return { ...s, content_id: e.data.content_id, exists: true, type: e.data.type, url: e.data.url, normalized_url: e.data.normalized_url };
    case 'ContentDeleted':
      // what the item held is dropped (the request's sealed parts too); what a running job needs to stop is kept
      return {
        ...initialPipeline(),
        content_id: s.content_id,
        deleted: true,
        request: s.request && { ...s.request, title: null, url: null, normalized_url: null },
        pipeline_status: s.pipeline_status,
        type: s.type,
      };
    // the title is the item's; the job's start and charges say nothing of the draft
    case 'ContentTitleChanged':
    case 'JobStarted':
    case 'CreditsCharged':
      return s;
    default:
      return exhaustive(e, s);
  }
}

/**
 * The pipeline's events folded into the item aggregate (commands/content/item.ts) for the item's own deciders (title,
 * delete): a generated item exists from its request; its stage, draft, version and publish follow.
 */
export function evolveItemByPipeline(s: ContentItemState, e: ContentPipelineEvent): ContentItemState {
  switch (e.type) {
    case 'ContentGenerationRequested':
      return { ...itemCreated(s, e.data), topic_id: e.data.topic_id, ...onRequest(e.data) };
    case 'ContentBriefGenerated':
      return { ...s, brief: e.data.brief, stage: 'generated_brief', version_number: e.data.version_number };
    case 'ContentBriefApproved':
      return s.stage === 'generated_brief' ? { ...s, stage: 'pending_article' } : s;
    case 'ContentArticleGenerated':
      return { ...s, body: e.data.body, meta_description: e.data.meta_description, stage: 'generated', version_number: e.data.version_number };
    case 'ContentPageFetched':
    case 'ContentEdited':
    case 'ContentRevised':
      return { ...s, body: e.data.body, version_number: e.data.version_number };
    case 'ContentReviewed':
      return { ...s, body: e.data.body, meta_description: e.data.meta_description, version_number: e.data.version_number };
    case 'ContentPublished':
      return { ...s, url: e.data.url, normalized_url: e.data.normalized_url, stage: 'done', mark_as_done_time: e.data.published_at };
    case 'JobSucceeded':
      return e.data.kind === 'content' ? { ...s, pipeline_status: 'succeeded' } : s;
    case 'JobFailed':
      return e.data.kind === 'content' ? { ...s, pipeline_status: 'failed', stage: 'failed' } : s;
    default:
      return exhaustive(e, s);
  }
}

export const pipelineAggregate: Aggregate<ContentPipeline, ContentEvent> = {
  types: CONTENT_EVENT_TYPES,
  initial: initialPipeline,
  evolve: evolvePipeline,
};

/** A URL as the item stores it: without its protocol. */
export const stripProtocol = (url: string) => url.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');

/** The id of a version: derived from the item and its number, so a step run twice records one version. */
export const versionId = (contentId: string, versionNumber: number) => deterministicId('content-version', contentId, String(versionNumber));

/** Words of a text (letters or digits, with inner apostrophes and hyphens): the word counts of edit and revise. */
export function wordCount(text: string | null | undefined): number {
  if (!text) return 0;
  return (text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? []).length;
}

/** The label and change type each kind of version is listed with. */
export const VERSION_KINDS = {
  ContentBriefGenerated: { change_type: 'brief', label: 'Brief' },
  ContentArticleGenerated: { change_type: 'generated', label: 'Article generated' },
  ContentPageFetched: { change_type: 'imported', label: 'Live page fetched' },
  ContentReviewed: { change_type: 'optimized', label: 'Optimization review' },
  ContentEdited: { change_type: 'edit', label: 'Edited' },
  ContentRevised: { change_type: 'revision', label: 'Revised' },
} as const;
export type VersionEventType = keyof typeof VERSION_KINDS;
