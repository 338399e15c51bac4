import type { ContentType } from '../../src/domain/content';
import type { DomainEvent } from '../../src/domain/events';
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

function apply(s: ContentUrlsState, e: DomainEvent): ContentUrlsState {
  switch (e.type) {
    case 'ContentUrlsClaimed':
      for (const c of e.data.claims) {
        const previous = s.byContent.get(c.content_id);
        if (previous !== undefined && s.byUrl.get(previous)?.content_id === c.content_id) s.byUrl.delete(previous);
        s.byUrl.set(c.normalized_url, { content_id: c.content_id, type: c.type, sheet_id: c.sheet_id });
        s.byContent.set(c.content_id, c.normalized_url);
      }
      return s;
    case 'ContentUrlReleased':
      if (s.byUrl.get(e.data.normalized_url)?.content_id === e.data.content_id) s.byUrl.delete(e.data.normalized_url);
      s.byContent.delete(e.data.content_id);
      return s;
    default:
      return s;
  }
}

const copy = (s: ContentUrlsState): ContentUrlsState => ({ byUrl: new Map(s.byUrl), byContent: new Map(s.byContent) });

export const ContentUrls: Aggregate<ContentUrlsState> = {
  initial,
  evolve: (s, e) => apply(copy(s), e),
  replay: { own: copy, apply },
};
