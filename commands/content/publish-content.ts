import { z } from 'zod';
import { conflict, type DomainError, invalid, isDomainError, notFound } from '../../src/domain/errors';
import { tryNormalizeUrl } from '../../src/domain/urls';
import { text } from '../../src/domain/schemas';
import { type CommandContext, type Decision, type Handled, handle, load } from '../handle';
import { ContentUrls, contentUrlsStream } from './urls';
import { CONTENT_NOT_FOUND, type ContentPipeline, contentStream, pipelineAggregate, stripProtocol } from './pipeline';

export const PublishContent = z.strictObject({
  url: text('must be a URL')
    .min(1, 'must not be empty')
    .max(2048, 'must be at most 2048 characters')
    .describe('The live page (the protocol is optional and not stored): the citation join key from now on'),
});

export const NOT_FINISHED = 'Content is not finished';
export const BRIEF_NOT_APPROVED = 'Brief is not approved';
export const REVIEW_RUNNING = 'Review is running';
export const GENERATION_FAILED = 'Generation failed';

export interface PublishContentResult {
  content_id: string;
  url: string;
  normalized_url: string;
  stage: 'done';
  mark_as_done_time: string;
  already_published: boolean;
}

/**
 * The spec's state table, row by row: a finished article (stage generated) and an Optimize draft without a running
 * review are published (stage done, the time stamped, the URL the citation join key); an item published before keeps
 * its first publish time and only changes its URL (already_published); every other item is refused with its reason.
 */
export function decidePublish(s: ContentPipeline, input: { url: string }, now: Date): Decision<PublishContentResult> | DomainError {
  if (!s.exists || !s.content_id) return notFound(CONTENT_NOT_FOUND);
  const normalized = tryNormalizeUrl(input.url);
  if (!normalized) return invalid('url must be a URL (a host with an optional path)');
  const url = stripProtocol(input.url.trim());
  if (s.mark_as_done_time) {
    const result = {
      content_id: s.content_id,
      url,
      normalized_url: normalized,
      stage: 'done' as const,
      mark_as_done_time: s.mark_as_done_time,
      already_published: true,
    };
    if (s.url === url && s.normalized_url === normalized) return { events: [], result };
    return { events: [published(s.content_id, url, normalized, s.mark_as_done_time, true)], result };
  }
  const refusal = publishRefusal(s);
  if (refusal) return conflict(refusal);
  const at = now.toISOString();
  return {
    events: [published(s.content_id, url, normalized, at, false)],
    result: { content_id: s.content_id, url, normalized_url: normalized, stage: 'done', mark_as_done_time: at, already_published: false },
  };
}

/** Why an item not yet published cannot be published now; null when it can. */
export function publishRefusal(s: ContentPipeline): string | null {
  if (s.stage === 'failed' || s.pipeline_status === 'failed') return GENERATION_FAILED;
  switch (s.stage) {
    case 'generated':
      return null;
    case 'pending':
      if (s.type !== 'optimize') return NOT_FINISHED;
      return s.pipeline_status === 'running' ? REVIEW_RUNNING : null;
    case 'generated_brief':
      return BRIEF_NOT_APPROVED;
    default:
      // pending_brief, pending_article, scheduled (a CMS publish to come), and tracked pages with no generation
      return NOT_FINISHED;
  }
}

const published = (content_id: string, url: string, normalized_url: string, published_at: string, already_published: boolean) => ({
  type: 'ContentPublished' as const,
  data: { content_id, url, normalized_url, published_at, already_published },
});

export const URL_TAKEN = 'URL is already tracked by another content item';

/**
 * Publishes: the spec's decision on the item's stream; a new URL is first claimed in the website's URL registry
 * (`contenturls-<website>`, one item per normalized URL: a URL another item holds is refused with that item), then the
 * publish is recorded on the item. A URL sent again changes nothing.
 */
export async function publishContent(
  ctx: CommandContext,
  contentId: string,
  input: z.output<typeof PublishContent>,
): Promise<Handled<PublishContentResult> | DomainError> {
  const now = ctx.now?.() ?? new Date();
  const stream = contentStream(contentId);
  const { state } = await load(ctx.store, stream, pipelineAggregate);
  const preview = decidePublish(state, input, now);
  if (isDomainError(preview)) return preview;
  if (preview.events.length === 0) return { result: preview.result, position: null, events: [] };
  const websiteId = state.request?.website_id ?? ctx.websiteId;
  if (!websiteId || !state.type) return notFound(CONTENT_NOT_FOUND);
  const claim = await handle(ctx, contentUrlsStream(websiteId), ContentUrls, (urls): Decision<null> | DomainError => {
    const holder = urls.byUrl.get(preview.result.normalized_url);
    if (holder && holder.content_id !== contentId) return conflict(URL_TAKEN, { existing: { content_id: holder.content_id, type: holder.type } });
    if (holder) return { events: [], result: null };
    return {
      events: [
        {
          type: 'ContentUrlsClaimed',
          data: {
            website_id: websiteId,
            claims: [
              { content_id: contentId, normalized_url: preview.result.normalized_url, type: state.type!, sheet_id: state.request?.sheet_id ?? null },
            ],
          },
        },
      ],
      result: null,
    };
  });
  if (isDomainError(claim)) return claim;
  return handle(ctx, stream, pipelineAggregate, (s) => decidePublish(s, input, now));
}
