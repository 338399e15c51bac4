import { z } from 'zod';
import type { DomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { Name, WebsiteId } from './catalog-input';
import { label } from '../../src/domain/schemas';

export const CreateLocation = z.strictObject({
  website_id: WebsiteId,
  /** display name, e.g. "Austin, Texas, United States" */
  location: Name.describe('Display name, e.g. "Austin, Texas, United States" (up to 200 characters)'),
  country: label(100).describe('Country (up to 100 characters)'),
  region: label(200).nullable().optional().describe('Region or state (up to 200 characters); optional'),
  city: label(200).nullable().optional().describe('City (up to 200 characters); optional'),
});
export type CreateLocation = z.infer<typeof CreateLocation>;

/** A place answers are asked from; its id is what filters.location_ids takes. */
export function decideCreateLocation(_s: CatalogState, cmd: CreateLocation & { location_id: string }): Decision<Written> | DomainError {
  const data = { location_id: cmd.location_id, location: cmd.location, country: cmd.country, region: cmd.region ?? null, city: cmd.city ?? null };
  return { events: [{ type: 'LocationCreated', data }], result: { id: data.location_id } };
}

export function createLocation(ctx: CommandContext, input: CreateLocation) {
  const location_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreateLocation(s, { ...input, location_id }));
}
