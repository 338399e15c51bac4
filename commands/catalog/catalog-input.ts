import { z } from 'zod';
import { boundedString, label, text, WebsiteId } from '../../src/domain/schemas';

/** Field schemas shared by the catalogue commands (messages name the field through issueMessage). */
export { WebsiteId } from '../../src/domain/schemas';
export const Name = label(200);
/** A rename in an update: optional, the same limits as Name. */
export const NewName = Name.optional().describe('New name (up to 200 characters); omitted = unchanged');
export const Description = boundedString(2000);
export const PromptText = boundedString(2000);
export const Identifiers = z.array(label(200), { error: 'must be an array of strings' }).max(50, 'must have at most 50 items');
export const Tags = z.array(label(100), { error: 'must be an array of strings' }).max(50, 'must have at most 50 items');
export const PromptType = z.enum(['branded', 'non_branded'], { error: "must be 'branded' or 'non_branded'" });
export const PromptStatus = z.enum(['active', 'paused'], { error: "must be 'active' or 'paused'" });
export const Bool = z.boolean({ error: 'must be a boolean' });

/**
 * A new named item of a website with an optional description (a persona, an attribute): one set of fields and limits,
 * `doc` says what the name and the description are of this kind.
 */
export const describedItem = (doc: { name: string; description: string }) =>
  z.strictObject({
    website_id: WebsiteId,
    name: Name.describe(doc.name),
    description: Description.nullable().optional().describe(doc.description),
  });

/** A UTC calendar day, `YYYY-MM-DD`, that exists. */
export const Day = text('must be a date YYYY-MM-DD')
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
  }, 'must be a real calendar day');

/**
 * An update's refinement (`.refine(...somethingToChange(fields))`): at least one of `fields` sent, else a 400 that names
 * them in their order, "nothing to change: send a, b or c".
 */
export function somethingToChange<K extends string>(
  fields: readonly [K, ...K[]],
): [(b: { [F in K]?: unknown }) => boolean, { message: string; path: string[] }] {
  const names = `${fields.slice(0, -1).join(', ')} or ${fields.at(-1)}`;
  return [(b) => fields.some((f) => b[f] !== undefined), { message: `nothing to change: send ${names}`, path: [] }];
}

/** Drops exact repeats, keeping the first occurrence's order. */
export const unique = (xs: string[]) => [...new Set(xs)];
export const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
