import type { ContentType } from '../../src/domain/content';
import { type EventsOf, exhaustive, contentUrlsEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import type { Aggregate } from '../handle';

export { contentUrlsStream } from '../../src/domain/content';

/** Who holds a normalized URL of the website. */
export interface UrlClaim {
  content_id: string;
  type: ContentType;
  sheet_id: string | null;
}

/**
 * A website's URL registry, stream `contenturls-<website_id>`: which item holds each normalized URL. Every rule "one
 * item per URL of a website" (tracking, publishing) is decided here with the stream's expected revision, so racing
 * requests get one winner.
 */
export interface ContentUrlsState {
  byUrl: Map<string, UrlClaim>;
  /** the URL each item holds */
  byContent: Map<string, string>;
}

const initial = (): ContentUrlsState => ({ byUrl: new Map(), byContent: new Map() });

/** The item holds no URL any more (the one it held is free, unless another item took it since). */
function release(s: ContentUrlsState, contentId: string): void {
  const url = s.byContent.get(contentId);
  if (url !== undefined && s.byUrl.get(url)?.content_id === contentId) s.byUrl.delete(url);
  s.byContent.delete(contentId);
}

export const CONTENT_URLS_EVENT_TYPES = typesOf(contentUrlsEvents);
export type ContentUrlsEvent = EventsOf<typeof CONTENT_URLS_EVENT_TYPES>;

function apply(s: ContentUrlsState, e: ContentUrlsEvent): ContentUrlsState {
  switch (e.type) {
    case 'ContentUrlsClaimed':
      for (const c of e.data.claims) {
        release(s, c.content_id);
        // null: the item is erased, and the URL it held is free
        if (c.normalized_url === null) continue;
        s.byUrl.set(c.normalized_url, { content_id: c.content_id, type: c.type, sheet_id: c.sheet_id });
        s.byContent.set(c.content_id, c.normalized_url);
      }
      return s;
    case 'ContentUrlReleased':
      release(s, e.data.content_id);
      return s;
    default:
      return exhaustive(e, s);
  }
}

const copy = (s: ContentUrlsState): ContentUrlsState => ({ byUrl: new Map(s.byUrl), byContent: new Map(s.byContent) });

export const ContentUrls: Aggregate<ContentUrlsState, ContentUrlsEvent> = {
  types: CONTENT_URLS_EVENT_TYPES,
  initial,
  evolve: (s, e) => apply(copy(s), e),
  replay: { own: copy, apply },
};
