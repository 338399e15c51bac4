import { z } from 'zod';
import { boundedString, label, text } from '../../src/domain/schemas';

/** Field schemas shared by the catalogue commands (messages name the field through issueMessage). */
export { WebsiteId } from '../../src/domain/schemas';
export const Name = label(200);
export const Description = boundedString(2000);
export const PromptText = boundedString(2000);
export const Identifiers = z.array(label(200), { error: 'must be an array of strings' }).max(50, 'must have at most 50 items');
export const Tags = z.array(label(100), { error: 'must be an array of strings' }).max(50, 'must have at most 50 items');
export const PromptType = z.enum(['branded', 'non_branded'], { error: "must be 'branded' or 'non_branded'" });
export const PromptStatus = z.enum(['active', 'paused'], { error: "must be 'active' or 'paused'" });
export const Bool = z.boolean({ error: 'must be a boolean' });

/** A UTC calendar day, `YYYY-MM-DD`, that exists. */
export const Day = text('must be a date YYYY-MM-DD')
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD')
  .refine((s) => {
    const d = new Date(`${s}T00:00:00Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
  }, 'must be a real calendar day');

/** Drops exact repeats, keeping the first occurrence's order. */
export const unique = (xs: string[]) => [...new Set(xs)];
export const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
