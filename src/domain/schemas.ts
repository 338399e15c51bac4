import { z } from 'zod';

/** Shared input schemas, with messages that name what is wrong (the field path is prefixed where they are reported). */
export const Uuid = z.string({ error: 'must be a string' }).uuid({ message: 'must be a UUID' });
export const boundedString = (max: number, min = 1) =>
  z
    .string({ error: 'must be a string' })
    .trim()
    .min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`);
