import type { Knex } from 'knex';
import { ASSUMPTIONS, GATHERING_THRESHOLD } from './model';
import type { AiSearchValue, Band, Valuation } from './views';

/** A figure older than this, on a website below the activity threshold, is stale (docs/VALUATION.md, section 7). */
export const REFRESH_WINDOW_MS = 7 * 86_400_000;

const zero: Band = { conservative: 0, expected: 0, upside: 0 };

/** The website's AI search value as last computed, and its state now (gathering, stale). One indexed row. */
export async function readAiSearchValue(db: Knex, websiteId: string, now: Date): Promise<AiSearchValue> {
  const row: { checked_at: Date | null; measured_responses: number; computed_at: Date | null; valuation: unknown } | undefined = await db(
    'rm_ai_values',
  )
    .where('website_id', websiteId)
    .first('checked_at', 'measured_responses', 'computed_at', 'valuation');
  const measured = row?.measured_responses ?? 0;
  if (!row?.valuation || !row.computed_at) {
    return {
      website_id: websiteId,
      assumptions_version: ASSUMPTIONS.assumptions_version,
      computed_at: row?.checked_at ? row.checked_at.toISOString() : null,
      has_computed_valuations: false,
      is_stale_value: false,
      market: { value_usd_mo: 0, topics_priced: 0, topics_total: 0, coverage_pct: 0, current_sov_pct: 0 },
      captured: zero,
      headroom: zero,
      measured_responses: measured,
      topics: [],
      merge_suggestions: [],
      contribution: { modeled_attributed: zero, attributed_share: 0, attribution_unavailable: true, unavailable_reason: 'no valuation yet' },
      forecast: null,
    };
  }
  // validated when it was stored (projections/ai-value.ts)
  const v = row.valuation as Valuation;
  const below = measured < GATHERING_THRESHOLD;
  return {
    ...v,
    website_id: websiteId,
    computed_at: row.computed_at.toISOString(),
    has_computed_valuations: true,
    is_stale_value: below && now.getTime() - row.computed_at.getTime() > REFRESH_WINDOW_MS,
    measured_responses: measured,
  };
}

/** A topic's economics as set (PATCH /topics/{id}); null when none are. */
export async function topicEconomicsOf(db: Knex, topicId: string): Promise<{ monthly_searches: number; cpc_usd: number } | null> {
  const row = await db('rm_topic_economics').where({ topic_id: topicId }).first('monthly_searches', 'cpc_usd');
  return row ? { monthly_searches: Number(row.monthly_searches), cpc_usd: Number(row.cpc_usd) } : null;
}

/** A website's value state as the scheduler weighs it (dueReason). */
export interface DueRow {
  website_id: string;
  organization_id: string;
  requested_at: Date | null;
  economics_changed_at: Date | null;
  checked_at: Date | null;
  facts_version: string | null;
  facts_now: string | null;
}

/** Every active website of an organization with the AI search value: its value's state and its facts' version now. */
export async function valuationStates(db: Knex): Promise<DueRow[]> {
  const r = await db.raw(
    `select w.id as website_id, w.organization_id, v.requested_at, v.economics_changed_at, v.checked_at, v.facts_version,
            s.version::text as facts_now
       from rm_websites w
       join rm_organizations o on o.id = w.organization_id and 'ai_search_value' = any(o.features)
       left join rm_ai_values v on v.website_id = w.id
       left join rm_fact_sites s on s.website_id = w.id
      where w.status = 'active'`,
  );
  return r.rows;
}
