import type { z } from 'zod';
import { conflict, type DomainError } from '../../src/domain/errors';
import { newId } from '../../src/domain/ids';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, nameKey, type Written } from './catalog';
import { describedItem } from './catalog-input';

export const CreateAttribute = describedItem({
  name: 'The trait answers are watched for, e.g. price or support (up to 200 characters; unique per website)',
  description: 'What the trait covers (up to 2000 characters); optional',
});
export type CreateAttribute = z.infer<typeof CreateAttribute>;

/** A trait to watch (price, support, ...); names are unique per website, case-insensitively. */
export function decideCreateAttribute(s: CatalogState, cmd: CreateAttribute & { attribute_id: string }): Decision<Written> | DomainError {
  const key = nameKey(cmd.name);
  for (const a of s.attributes.values()) if (nameKey(a.name) === key) return conflict('Attribute already exists', { existing: a });
  const data = { attribute_id: cmd.attribute_id, name: cmd.name, description: cmd.description ?? null };
  return { events: [{ type: 'AttributeCreated', data }], result: { id: data.attribute_id } };
}

export function createAttribute(ctx: CommandContext, input: CreateAttribute) {
  const attribute_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreateAttribute(s, { ...input, attribute_id }));
}
