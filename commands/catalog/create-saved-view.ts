import { z } from 'zod';
import { type DomainError, invalid } from '../../src/domain/errors';
import { StoredDateRange } from '../../src/domain/filters';
import { newId } from '../../src/domain/ids';
import { MODEL_COUNT, modelIdSchema } from '../../src/domain/models';
import { boundedString, label, text, textProblem, Uuid } from '../../src/domain/schemas';
import type { CommandContext, Decision } from '../handle';
import { type CatalogState, handleCatalog, type Written } from './catalog';
import { Name, PromptStatus, PromptType, WebsiteId } from './catalog-input';
import { isUuid } from '../../src/domain/ids';

const MAX_KEYS = 50;
const MAX_DEPTH = 4;
const MAX_ARRAY = 1000;
const MAX_STRING = 2000;
export const MAX_FILTERS_BYTES = 32 * 1024;

/** What a stored value may be: JSON of valid text, bounded in depth, array length and string length; names the path. */
function boundedJson(v: unknown, depth: number, path: PropertyKey[] = []): { path: PropertyKey[]; message: string } | null {
  const bad = (message: string) => ({ path, message });
  if (v === null || typeof v === 'boolean') return null;
  if (typeof v === 'number') return Number.isFinite(v) ? null : bad('must be a finite number');
  if (typeof v === 'string') {
    const problem = textProblem(v);
    if (problem) return bad(problem);
    return v.length > MAX_STRING ? bad(`must be at most ${MAX_STRING} characters`) : null;
  }
  if (depth >= MAX_DEPTH) return bad(`must be nested at most ${MAX_DEPTH} levels deep`);
  if (Array.isArray(v)) {
    if (v.length > MAX_ARRAY) return bad(`must have at most ${MAX_ARRAY} items`);
    for (const [i, x] of v.entries()) {
      const inner = boundedJson(x, depth + 1, [...path, i]);
      if (inner) return inner;
    }
    return null;
  }
  if (typeof v === 'object') {
    const entries = Object.entries(v as object);
    if (entries.length > MAX_KEYS) return bad(`must have at most ${MAX_KEYS} keys`);
    for (const [k, x] of entries) {
      if (k.length > 64) return bad('keys must be at most 64 characters');
      const keyProblem = textProblem(k);
      if (keyProblem) return bad(`keys ${keyProblem}`);
      const inner = boundedJson(x, depth + 1, [...path, k]);
      if (inner) return inner;
    }
    return null;
  }
  return bad('must be JSON');
}

const AnyFilter = z.unknown().superRefine((v, ctx) => {
  const bad = boundedJson(v, 1);
  if (bad) ctx.addIssue({ code: 'custom', path: bad.path, message: bad.message });
});

const ModelList = z
  .array(modelIdSchema, { error: 'must be an array of model identifiers' })
  .max(MODEL_COUNT, `must have at most ${MODEL_COUNT} items`);
const Ids = (max: number) => z.array(Uuid, { error: 'must be an array of UUIDs' }).max(max, `must have at most ${max} items`);

/**
 * A view's stored filters. The fields metrics read are typed; anything else the app's pages store (sentiment,
 * source tags, `models_not`, ...) is kept as given, bounded in size. Metrics decide later what they can reproduce.
 */
export const SavedViewFilters = z
  .object(
    {
      schedule_id: text()
        .refine((s) => s === 'default' || s === 'manual' || isUuid(s), "must be 'default' or a schedule id")
        .optional()
        .describe("'default' (alias 'manual') or a schedule id of the website"),
      start_date: boundedString(40)
        .optional()
        .describe("Start of the view's range: YYYY-MM-DD or an ISO 8601 date-time, stored as given; a request's start_date always wins"),
      end_date: boundedString(40)
        .optional()
        .describe("End of the view's range (a plain date is inclusive), not before start_date; a request's end_date always wins"),
      models: ModelList.optional().describe('Only these model identifiers; omitted = every model'),
      models_not: ModelList.optional().describe(
        'Every model except these: stored, but metrics cannot reproduce it and refuse the view unless the request sends models',
      ),
      prompt_ids: Ids(1000).optional().describe('Only these prompts (at most 1000)'),
      location_ids: Ids(100).optional().describe('Only these locations (at most 100)'),
      competitor_ids: Ids(100).optional().describe("The competitors the view includes (at most 100); they decide the brand's relative_mention_rate"),
      prompt_status: PromptStatus.optional().describe("'active' or 'paused'; omitted = active prompts only when the view is applied"),
      prompt_type: PromptType.optional().describe("'branded' or 'non_branded'"),
      prompt_tags: z
        .array(label(100), { error: 'must be an array of strings' })
        .max(50, 'must have at most 50 items')
        .optional()
        .describe('Only prompts with these tags (at most 50; see prompt_tags_operator)'),
      prompt_tags_operator: z
        .enum(['any', 'all'], { error: "must be 'any' or 'all'" })
        .optional()
        .describe("'any': a prompt with at least one of prompt_tags; 'all': every tag"),
    },
    { error: 'must be an object' },
  )
  .catchall(AnyFilter)
  .superRefine((f, ctx) => {
    const keys = Object.keys(f);
    if (keys.length > MAX_KEYS) ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_KEYS} keys` });
    const long = keys.find((k) => k.length > 64);
    if (long) ctx.addIssue({ code: 'custom', message: 'keys must be at most 64 characters' });
    for (const k of keys) {
      const problem = textProblem(k);
      if (problem) ctx.addIssue({ code: 'custom', message: `keys ${problem}` });
    }
    if (JSON.stringify(f).length > MAX_FILTERS_BYTES) ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_FILTERS_BYTES} bytes of JSON` });
    // a range the metric reads would refuse is refused when saved, with their message
    for (const issue of StoredDateRange.safeParse({ start_date: f.start_date, end_date: f.end_date }).error?.issues ?? []) {
      ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    }
  });
export type SavedViewFilters = z.infer<typeof SavedViewFilters>;

export const CreateSavedView = z.strictObject({
  website_id: WebsiteId,
  name: Name.describe("The view's name (up to 200 characters)"),
  filters: SavedViewFilters.default({}).describe(
    `The view's filters, stored as given: the typed keys below and any other key the app's pages use (JSON, at most ${MAX_FILTERS_BYTES / 1024} KiB); default {}`,
  ),
});
export type CreateSavedView = z.input<typeof CreateSavedView>;

/**
 * The first filter id that is not this website's, as a 400 naming it. Ids the catalogue still knows count as the
 * website's (soft-deleted prompts, removed competitors, archived schedules: the view then selects nothing for them);
 * another website's or organization's ids never do.
 */
export function foreignFilterId(s: CatalogState, filters: Record<string, unknown>): DomainError | null {
  const known: [field: string, has: (id: string) => boolean, what: string][] = [
    ['prompt_ids', (id) => s.prompts.get(id)?.hard_deleted === false, 'prompt'],
    ['location_ids', (id) => s.locations.has(id), 'location'],
    ['competitor_ids', (id) => s.competitors.has(id), 'competitor'],
  ];
  for (const [field, has, what] of known) {
    const ids = filters[field];
    if (!Array.isArray(ids)) continue;
    const i = ids.findIndex((id) => typeof id !== 'string' || !has(id.toLowerCase()));
    if (i >= 0) return invalid(`filters.${field}[${i}]: no ${what} of this website has this id`);
  }
  const schedule = filters.schedule_id;
  if (typeof schedule === 'string' && schedule !== 'default' && schedule !== 'manual' && !s.schedules.has(schedule.toLowerCase())) {
    return invalid('filters.schedule_id: no schedule of this website has this id');
  }
  return null;
}

export function decideCreateSavedView(s: CatalogState, cmd: CreateSavedView & { view_id: string }): Decision<Written> | DomainError {
  const foreign = foreignFilterId(s, (cmd.filters ?? {}) as Record<string, unknown>);
  if (foreign) return foreign;
  const data = { view_id: cmd.view_id, name: cmd.name, filters: (cmd.filters ?? {}) as Record<string, unknown> };
  return { events: [{ type: 'SavedViewCreated', data }], result: { id: data.view_id } };
}

export function createSavedView(ctx: CommandContext, input: CreateSavedView) {
  const view_id = newId();
  return handleCatalog(ctx, input.website_id, (s) => decideCreateSavedView(s, { ...input, view_id }));
}
