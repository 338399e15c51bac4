import { z } from 'zod';
import { Tags } from '../../commands/catalog/catalog-input';
import { resolveSelection } from '../../queries/filters';
import { promptsTagged, type ShoppingMetrics, shoppingMetrics } from '../../queries/shopping/metrics';
import { parseFilterDate, toolDateSchema, utcDay } from '../domain/dates';
import { DomainErrorException, forbidden } from '../domain/errors';
import { MAX_FILTER_COMPETITORS, ScheduleSelection, scheduleValue } from '../domain/filters';
import { SHOPPING_MODEL_COUNT, SHOPPING_MODEL_IDS, shoppingModelIdSchema } from '../domain/models';
import type { Need, Principal } from '../domain/principal';
import { boundedString, text, Uuid, WebsiteId } from '../domain/schemas';
import { type Caller, dbOf, websiteFor } from './context';

/** 403 for an organization whose plan does not include shopping visibility. */
export const SHOPPING_NOT_ENABLED = 'Shopping visibility is not enabled for this organization';

export const TOP_PRODUCTS_LIMIT_MAX = 50;
export const TOP_PRODUCTS_LIMIT_DEFAULT = 10;
export const MAX_TARGET_IDENTIFIERS = 50;

const PLAIN_DAY = /^\d{4}-\d{2}-\d{2}$/;

/** REST: a plain UTC day `YYYY-MM-DD` (no time); a start is its first instant, an end its last. */
const ShoppingDay = (side: 'start' | 'end') =>
  text('must be a date YYYY-MM-DD')
    .transform((s, ctx) => {
      const v = s.trim();
      if (!PLAIN_DAY.test(v)) {
        ctx.addIssue({ code: 'custom', message: `must be a plain date YYYY-MM-DD (a whole UTC day, inclusive), not ${JSON.stringify(s)}` });
        return z.NEVER;
      }
      const r = parseFilterDate(v, side);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: r.error });
        return z.NEVER;
      }
      return r.value;
    })
    .meta({
      type: 'string',
      format: 'date',
      description: `UTC day YYYY-MM-DD, inclusive (${side === 'start' ? 'from its first instant' : 'through 23:59:59.999Z'})`,
    });

const endNotBeforeStart = (f: { start_date?: Date; end_date?: Date }, ctx: z.RefinementCtx) => {
  // a date that failed its own check is still its input string here: nothing to compare
  if (f.start_date instanceof Date && f.end_date instanceof Date && f.end_date.getTime() < f.start_date.getTime()) {
    ctx.addIssue({ code: 'custom', path: ['end_date'], message: `is before start_date (${utcDay(f.start_date)})` });
  }
};

const TARGET_IDENTIFIERS_DOC =
  "Restricts the brand's own products to cards whose product name or brand contains one of these identifiers as a whole word, case-insensitive (e.g. a product line: ['Acme Pro']); the brand's other cards then count as neither own nor competitor. Empty or omitted: every card of the brand is own.";

function shoppingFilterFields(date: (side: 'start' | 'end') => z.ZodType<Date, string>) {
  return {
    schedule_id: ScheduleSelection.optional(),
    models: z
      .array(shoppingModelIdSchema, { error: 'must be an array of model identifiers' })
      .max(SHOPPING_MODEL_COUNT, `must have at most ${SHOPPING_MODEL_COUNT} items`)
      .optional()
      .meta({ description: `Shopping models only (${SHOPPING_MODEL_IDS.join(', ')}); omitted: both` }),
    competitor_ids: z
      .array(Uuid, { error: 'must be an array of UUIDs' })
      .max(MAX_FILTER_COMPETITORS, `must have at most ${MAX_FILTER_COMPETITORS} items`)
      .optional()
      .meta({ description: "This website's competitors to report on (competitor blocks and competitor cards); omitted: all" }),
    prompt_tags: Tags.optional().meta({
      description: 'Only answers of prompts tagged with these tags (exact match; see prompt_tags_operator); empty or omitted: every prompt',
    }),
    prompt_tags_operator: z
      .enum(['any', 'all'], { error: "must be 'any' or 'all'" })
      .optional()
      .meta({ description: "'any' (default): a prompt with at least one of the tags; 'all': every tag" }),
    target_identifiers: z
      .array(boundedString(200), { error: 'must be an array of strings' })
      .max(MAX_TARGET_IDENTIFIERS, `must have at most ${MAX_TARGET_IDENTIFIERS} items`)
      .optional()
      .meta({ description: TARGET_IDENTIFIERS_DOC }),
    start_date: date('start').optional(),
    end_date: date('end').optional(),
  };
}

const TopProductsLimit = z
  .number({ error: 'must be an integer' })
  .int('must be an integer')
  .min(1, `must be between 1 and ${TOP_PRODUCTS_LIMIT_MAX}`)
  .max(TOP_PRODUCTS_LIMIT_MAX, `must be between 1 and ${TOP_PRODUCTS_LIMIT_MAX}`)
  .default(TOP_PRODUCTS_LIMIT_DEFAULT)
  .meta({ description: `Products per top list, 1 to ${TOP_PRODUCTS_LIMIT_MAX} (default ${TOP_PRODUCTS_LIMIT_DEFAULT})` });

const SHOPPING_FILTERS =
  'Which answers count: only schedule_id, models, competitor_ids, prompt_tags, prompt_tags_operator, target_identifiers, start_date and end_date (any other key is refused); omitted = all history of the default schedule';

/** REST filters: exactly the eight keys; any other key is refused naming it. */
export const ShoppingFilters = z.strictObject(shoppingFilterFields(ShoppingDay)).superRefine(endNotBeforeStart).describe(SHOPPING_FILTERS);
/** MCP filters: the same keys; dates as the tool server takes them (a plain or spelled-out day, or an ISO timestamp). */
export const ToolShoppingFilters = z
  .strictObject(shoppingFilterFields((side) => toolDateSchema(side)))
  .superRefine(endNotBeforeStart)
  .describe(SHOPPING_FILTERS);
export type ShoppingFilters = z.output<typeof ShoppingFilters>;

export const ShoppingMetricsBody = z.strictObject({
  website_id: WebsiteId,
  filters: ShoppingFilters.optional(),
  top_products_limit: TopProductsLimit,
});
export const ToolShoppingMetricsInput = z.strictObject({
  website_id: WebsiteId,
  filters: ToolShoppingFilters.optional(),
  top_products_limit: TopProductsLimit,
});
export type ShoppingMetricsInput = z.output<typeof ShoppingMetricsBody>;

export function requireShopping(p: Principal): void {
  if (!p.features.includes('shopping')) throw new DomainErrorException(forbidden(SHOPPING_NOT_ENABLED));
}

const VIEW: Need = { category: 'analytics', level: 'view' };

/** Shopping visibility of one website over the answers of the shopping models the filters select. */
export async function shoppingVisibility(c: Caller, input: ShoppingMetricsInput): Promise<ShoppingMetrics> {
  requireShopping(c.principal);
  const db = dbOf(c);
  const w = await websiteFor(c, input.website_id, VIEW);
  const f = input.filters ?? {};
  // schedule and competitors are checked against the website (400 naming the field); soft-deleted prompts drop out
  const selection = await resolveSelection(
    db,
    w.id,
    {
      ...(f.schedule_id !== undefined ? { schedule_id: f.schedule_id } : {}),
      ...(f.competitor_ids !== undefined ? { competitor_ids: f.competitor_ids } : {}),
    },
    { prefix: 'filters' },
  );
  const tags = f.prompt_tags ?? [];
  const promptIds = tags.length ? await promptsTagged(db, w.id, selection.promptIds, tags, f.prompt_tags_operator ?? 'any') : selection.promptIds;
  const models = f.models ? [...new Set(f.models)] : [...SHOPPING_MODEL_IDS];
  const blocks = await shoppingMetrics(db, {
    websiteId: w.id,
    scheduleId: selection.scheduleId,
    start: f.start_date,
    end: f.end_date,
    models,
    promptIds,
    competitorIds: selection.competitorIds,
    targetIdentifiers: f.target_identifiers,
    topProductsLimit: input.top_products_limit,
  });
  return { schedule: scheduleValue(selection.scheduleId), models, ...blocks };
}
