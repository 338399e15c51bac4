import { z } from 'zod';

/**
 * Shared input schemas, with messages that name what is wrong (the field path is prefixed where they are reported).
 * Every string any caller sends (REST query, path and body, MCP arguments, CLI arguments) goes through `text`: NUL and
 * lone surrogates are refused there, once (Postgres text cannot hold NUL; UTF-8 has no surrogates, so a lone one
 * would be stored as U+FFFD without a word). Names and labels go through `label`, which also refuses control and
 * bidi override/isolate characters.
 */
export const TEXT_NUL = 'must not contain NUL (U+0000)';
export const TEXT_LONE_SURROGATE = 'must not contain a lone surrogate (U+D800 to U+DFFF; not valid Unicode)';
export const LABEL_CONTROL = 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F, U+2028, U+2029)';
export const LABEL_BIDI = 'must not contain bidirectional override or isolate characters (U+202A to U+202E, U+2066 to U+2069)';

const hasNul = (s: string) => s.includes('\u0000');
/** String.prototype.isWellFormed (Node 20; not yet in the ES2023 lib types). */
export const isWellFormed = (s: string) => (s as string & { isWellFormed(): boolean }).isWellFormed();
// C0, DEL, C1, and the line/paragraph separators: a name is one line of visible text
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// embeddings, overrides (U+202A-U+202E) and isolates (U+2066-U+2069): they reorder what is shown around them
const BIDI = /[\u202a-\u202e\u2066-\u2069]/;

/** Why a string cannot be taken as text, or null when it can (for values checked outside a schema). */
export function textProblem(s: string): string | null {
  if (hasNul(s)) return TEXT_NUL;
  if (!isWellFormed(s)) return TEXT_LONE_SURROGATE;
  return null;
}

/** A string that is valid text. `error` is the message for a value that is not a string at all. */
export const text = (error = 'must be a string') =>
  z
    .string({ error })
    .refine((s) => !hasNul(s), TEXT_NUL)
    .refine(isWellFormed, TEXT_LONE_SURROGATE);
/** Free text (prompt text, answer text, descriptions): any valid text, control characters included. */
export const Text = text();

/** Makes a string schema a name or label: no control characters, no bidi overrides or isolates. */
export const asLabel = <S extends z.ZodString>(s: S): S =>
  s.refine((v) => !CONTROL.test(v), LABEL_CONTROL).refine((v) => !BIDI.test(v), LABEL_BIDI) as S;

export const Uuid = text().uuid({ message: 'must be a UUID' });
/** One address the outbox can mail (it takes at most 254 characters): valid text first, so NUL is named as such. */
export const EmailAddress = text().email('must be an email address').max(254, 'must be at most 254 characters');
/** The website (brand) an operation is about: one of the key's websites. */
export const WebsiteId = Uuid.describe('The website (brand) id');
/** The id of one record of a website ("competitor", "topic", ...): `Uuid` with its description. */
export const idOf = (what: string) => Uuid.describe(`The ${what} id`);
export const boundedString = (max: number, min = 1) =>
  text()
    .trim()
    .min(min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`);
/** A name or label (websites, competitors, topics, attributes, personas, views, tags, locations, schedules, keys, and the areas to come: columns, roles, groups). */
export const label = (max: number, min = 1) => asLabel(boundedString(max, min));

const integer = (coerce: boolean) =>
  (coerce ? z.coerce.number({ error: 'must be an integer' }) : z.number({ error: 'must be an integer' })).int('must be an integer');
/** page_num counts from 0; `coerce` for query strings. */
export const PageNum = (coerce = false) => integer(coerce).min(0, 'must be at least 0').default(0).describe('Page number, from 0 (default 0)');
export const PageSize = (coerce = false, max = 100, byDefault = 40) =>
  integer(coerce)
    .min(1, `must be between 1 and ${max}`)
    .max(max, `must be between 1 and ${max}`)
    .default(byDefault)
    .describe(`Items per page, 1 to ${max} (default ${byDefault})`);

/** A list in a query string: repeated (`models=a&models=b`) or comma-separated (`models=a,b`). */
export const queryList = <T extends z.ZodType>(schema: T) =>
  z.preprocess(
    (v) =>
      typeof v === 'string'
        ? v
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : v,
    schema,
  );
