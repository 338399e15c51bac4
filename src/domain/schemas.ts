import { z } from 'zod';

/** Shared input schemas, with messages that name what is wrong (the field path is prefixed where they are reported). */
export const Uuid = z.string({ error: 'must be a string' }).uuid({ message: 'must be a UUID' });
export const boundedString = (max: number, min = 1) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`);

const integer = (coerce: boolean) => (coerce ? z.coerce.number({ error: 'must be an integer' }) : z.number({ error: 'must be an integer' })).int('must be an integer');
/** page_num counts from 0; `coerce` for query strings. */
export const PageNum = (coerce = false) => integer(coerce).min(0, 'must be at least 0').default(0);
export const PageSize = (coerce = false, max = 100, byDefault = 40) =>
  integer(coerce).min(1, `must be between 1 and ${max}`).max(max, `must be between 1 and ${max}`).default(byDefault);
