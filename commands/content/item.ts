import { CONTENT_EVENT_TYPES, type ContentEvent } from '../../src/domain/events';
import type { ContentFieldValue, ContentStage, ContentType, PipelineStatus } from '../../src/domain/content';
import type { Aggregate } from '../handle';
import { evolveItemByPipeline } from './pipeline';

export { contentStream } from '../../src/domain/content';

/**
 * One content item, as its stream `content-<content_id>` says (the deciders of tracking, title, delete, and of the
 * pipeline: generate, approve, publish, edit, revise). Sealed parts (brief, body, fields) read as null once erased.
 */
export interface ContentItemState {
  /** the stream holds the item's first event */
  exists: boolean;
  deleted: boolean;
  content_id: string | null;
  website_id: string | null;
  type: ContentType | null;
  /** null once erased, as the URLs */
  title: string | null;
  /** without the protocol; null until a generated item is published */
  url: string | null;
  normalized_url: string | null;
  sheet_id: string | null;
  topic_id: string | null;
  stage: ContentStage | null;
  pipeline_status: PipelineStatus | null;
  brief: string | null;
  body: string | null;
  meta_description: string | null;
  /** custom column values by column id */
  fields: Record<string, ContentFieldValue>;
  version_number: number;
  /** the first publish time (ISO) */
  mark_as_done_time: string | null;
}

export const initialContentItem = (): ContentItemState => ({
  exists: false,
  deleted: false,
  content_id: null,
  website_id: null,
  type: null,
  title: '',
  url: null,
  normalized_url: null,
  sheet_id: null,
  topic_id: null,
  stage: null,
  pipeline_status: null,
  brief: null,
  body: null,
  meta_description: null,
  fields: {},
  version_number: 0,
  mark_as_done_time: null,
});

/** What an item's first event (tracked, or a generation requested) makes of it: it exists, with its ids, type, title and tab. */
export function itemCreated(
  s: ContentItemState,
  d: Pick<ContentItemState, 'content_id' | 'website_id' | 'type' | 'title' | 'sheet_id'>,
): ContentItemState {
  return { ...s, exists: true, content_id: d.content_id, website_id: d.website_id, type: d.type, title: d.title, sheet_id: d.sheet_id };
}

/** Pure: the item after one of its events (the pipeline's events are folded here too, one case each). */
export function evolveContentItem(s: ContentItemState, e: ContentEvent): ContentItemState {
  switch (e.type) {
    case 'ContentTracked':
      return { ...itemCreated(s, e.data), url: e.data.url, normalized_url: e.data.normalized_url, fields: { ...(e.data.fields ?? {}) } };
    case 'ContentTitleChanged':
      return { ...s, title: e.data.title };
    case 'ContentDeleted':
      // erased: nothing of the sealed parts is kept in a cached state
      return { ...s, deleted: true, title: null, url: null, normalized_url: null, brief: null, body: null, meta_description: null, fields: {} };
    // the job's start and charges change nothing an item's decider reads
    case 'JobStarted':
    case 'CreditsCharged':
      return s;
    default:
      return evolveItemByPipeline(s, e);
  }
}

export const ContentItem: Aggregate<ContentItemState, ContentEvent> = {
  types: CONTENT_EVENT_TYPES,
  initial: initialContentItem,
  evolve: evolveContentItem,
};

/** The item is there to act on: its stream exists and it is not deleted. */
export const isLive = (s: ContentItemState) => s.exists && !s.deleted;
