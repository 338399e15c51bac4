import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql } from '../src/eventstore/projection';
import { Valuation } from '../queries/ai-value/views';
import { catalogWebsiteOf } from './rows';

/** The website's row, made when its first valuation event arrives. */
const siteRow = (trx: Knex.Transaction, websiteId: string, organizationId: string) =>
  trx('rm_ai_values').insert({ website_id: websiteId, organization_id: organizationId }).onConflict('website_id').ignore();

const handlers: EventHandlers<Knex.Transaction> = {
  async TopicEconomicsSet(e, trx) {
    const websiteId = catalogWebsiteOf(e);
    const at = e.metadata.time;
    if (e.data.economics === null) await trx('rm_topic_economics').where('topic_id', e.data.topic_id).delete();
    else
      await trx('rm_topic_economics')
        .insert({ topic_id: e.data.topic_id, website_id: websiteId, ...e.data.economics, updated_at: at })
        .onConflict('topic_id')
        .merge();
    await siteRow(trx, websiteId, e.metadata.organization_id);
    await trx('rm_ai_values').where('website_id', websiteId).update({ economics_changed_at: at });
  },
  async AiValueRequested(e, trx) {
    await siteRow(trx, e.data.website_id, e.metadata.organization_id);
    await trx('rm_ai_values')
      .where('website_id', e.data.website_id)
      .update({ requested_at: trx.raw('greatest(requested_at, ?::timestamptz)', [e.data.requested_at]) });
  },
  async AiValueComputed(e, trx) {
    const d = e.data;
    // a figure that is not one the reads can serve (an older shape) counts as a check without a figure
    const valuation = d.valuation && Valuation.safeParse(d.valuation).success ? d.valuation : null;
    await siteRow(trx, d.website_id, e.metadata.organization_id);
    // a computation older than the last check (jobs of two slots ending out of order) changes nothing
    const q = trx('rm_ai_values')
      .where('website_id', d.website_id)
      .andWhere((w) => w.whereNull('checked_at').orWhere('checked_at', '<=', d.computed_at));
    await q.update({
      checked_at: d.computed_at,
      measured_responses: d.measured_responses,
      facts_version: d.facts_version,
      ...(valuation ? { computed_at: d.computed_at, valuation: JSON.stringify(valuation) } : {}),
    });
  },
};

/** The latest AI search value of each website and the topics' own economics (docs/VALUATION.md). */
export const aiValueProjection = handlerProjection(
  {
    name: 'ai-value',
    version: 1,
    tables: ['rm_ai_values', 'rm_topic_economics'],
    migrate: migrateSql(`
        create table if not exists rm_ai_values (
          website_id uuid primary key,
          organization_id uuid not null,
          requested_at timestamptz,
          economics_changed_at timestamptz,
          checked_at timestamptz,
          measured_responses int not null default 0,
          facts_version text,
          computed_at timestamptz,
          valuation jsonb
        );
        create table if not exists rm_topic_economics (
          topic_id uuid primary key,
          website_id uuid not null,
          monthly_searches bigint not null,
          cpc_usd double precision not null,
          updated_at timestamptz not null
        );
        create index if not exists rm_topic_economics_site on rm_topic_economics (website_id);`),
  },
  handlers,
);
