import { z } from 'zod';
import { CONTENT_NOT_FOUND, contentStream, contentUrlsStream } from '../../src/domain/content';
import { type DomainError, isDomainError, notFound } from '../../src/domain/errors';
import { label, Uuid } from '../../src/domain/schemas';
import { maxPosition, type Position } from '../../src/eventstore/port';
import { type CommandContext, type Decision, type Handled, handle } from '../handle';
import { ContentItem, type ContentItemState, isLive } from './item';
import { ContentUrls, type ContentUrlsState } from './urls';

/** PATCH /api/v1/content/{id}: the title only (spec); any other key is a 400 naming it. */
export const UpdateContent = z.strictObject({
  website_id: Uuid.optional().describe('The website (brand) id; optional: the content id decides it'),
  title: label(500).describe('The new title'),
});
export type UpdateContent = z.infer<typeof UpdateContent>;

export function decideTitle(s: ContentItemState, cmd: { content_id: string; title: string }): Decision<{ content_id: string }> | DomainError {
  if (!isLive(s)) return notFound(CONTENT_NOT_FOUND);
  if (s.title === cmd.title) return { events: [], result: { content_id: cmd.content_id } };
  return {
    events: [{ type: 'ContentTitleChanged', data: { content_id: cmd.content_id, website_id: s.website_id!, title: cmd.title } }],
    result: { content_id: cmd.content_id },
  };
}

export const changeTitle = (ctx: CommandContext, cmd: { content_id: string; title: string }) =>
  handle(ctx, contentStream(cmd.content_id), ContentItem, (s) => decideTitle(s, cmd));

export function decideDelete(
  s: ContentItemState,
  cmd: { content_id: string },
): Decision<{ normalized_url: string | null; website_id: string }> | DomainError {
  if (!isLive(s)) return notFound(CONTENT_NOT_FOUND);
  return {
    events: [{ type: 'ContentDeleted', data: { content_id: cmd.content_id, website_id: s.website_id! } }],
    result: { normalized_url: s.normalized_url, website_id: s.website_id! },
  };
}

export function decideRelease(s: ContentUrlsState, cmd: { website_id: string; content_id: string }): Decision<null> {
  const url = s.byContent.get(cmd.content_id);
  if (url === undefined || s.byUrl.get(url)?.content_id !== cmd.content_id) return { events: [], result: null };
  // the URL is not named: it is the erased item's, sealed under its subject
  return {
    events: [{ type: 'ContentUrlReleased', data: { website_id: cmd.website_id, content_id: cmd.content_id } }],
    result: null,
  };
}

/**
 * DELETE /api/v1/content/{id}: physical (spec). The delete event erases the subject `content-<id>` (its sealed parts
 * read as null from then on, everywhere), then the URL is released on the registry so it can be tracked again under
 * a new id (a crash in between is repaired by the next tracking of that URL: the registry's holder is found deleted).
 */
export async function deleteContent(ctx: CommandContext, cmd: { content_id: string }): Promise<Handled<{ success: true }> | DomainError> {
  const deleted = await handle(ctx, contentStream(cmd.content_id), ContentItem, (s) => decideDelete(s, cmd));
  if (isDomainError(deleted)) return deleted;
  const websiteId = deleted.result.website_id;
  const released = await handle(ctx, contentUrlsStream(websiteId), ContentUrls, (s) =>
    decideRelease(s, { website_id: websiteId, content_id: cmd.content_id }),
  );
  if (isDomainError(released)) return released;
  let position: Position | null = deleted.position;
  if (released.position) position = position ? maxPosition(position, released.position) : released.position;
  return { result: { success: true }, position, events: [...deleted.events, ...released.events] };
}
