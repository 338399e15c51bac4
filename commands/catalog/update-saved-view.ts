import { z } from 'zod';
import { type DomainError, notFound } from '../../src/domain/errors';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { NewName, WebsiteId } from './catalog-input';
import { foreignFilterId, SavedViewFilters } from './create-saved-view';

export const UpdateSavedView = z
  .strictObject({
    website_id: WebsiteId,
    name: NewName,
    filters: SavedViewFilters.optional().describe('Replaces the stored filters as a whole; omitted = unchanged'),
  })
  .refine((b) => b.name !== undefined || b.filters !== undefined, { message: 'name or filters is required', path: [] });
export type UpdateSavedView = z.infer<typeof UpdateSavedView>;

export const SAVED_VIEW_NOT_FOUND = 'Saved view not found';

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Renames and/or replaces the stored filters as a whole; the id stays. */
export function decideUpdateSavedView(s: CatalogState, viewId: string, cmd: UpdateSavedView): Decision<Written> | DomainError {
  const v = s.saved_views.get(viewId);
  if (!v) return notFound(SAVED_VIEW_NOT_FOUND);
  const foreign = cmd.filters !== undefined ? foreignFilterId(s, cmd.filters as Record<string, unknown>) : null;
  if (foreign) return foreign;
  const name = cmd.name !== undefined && cmd.name !== v.name ? cmd.name : undefined;
  const filters = cmd.filters !== undefined && !sameJson(cmd.filters, v.filters) ? (cmd.filters as Record<string, unknown>) : undefined;
  if (name === undefined && filters === undefined) return { events: [], result: { id: v.id } };
  return {
    events: [{ type: 'SavedViewUpdated', data: { view_id: v.id, ...(name !== undefined && { name }), ...(filters !== undefined && { filters }) } }],
    result: { id: v.id },
  };
}

export function updateSavedView(ctx: CommandContext, input: UpdateSavedView & { view_id: string }) {
  const { view_id, ...change } = input;
  return handleCatalog(ctx, input.website_id, (s) => decideUpdateSavedView(s, view_id, change));
}
