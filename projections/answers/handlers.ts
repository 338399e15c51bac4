import type { Knex } from 'knex';
import type { EventOf } from '../../src/domain/events';
import type { TypedEvent } from '../../src/eventstore/port';
import type { EventHandlers } from '../../src/eventstore/projection';
import { catalogWebsiteOf } from '../rows';
import { siteEntityIdsSql } from '../site-entities';

export type Recorded = TypedEvent<EventOf<'ResponseRecorded'>>;

/** What the handlers of one batch share: the websites to re-derive, and the answers recorded (written together). */
export interface AnswersBatch {
  trx: Knex.Transaction;
  dirty: Set<string>;
  recorded: Recorded[];
}

export const handlers: EventHandlers<AnswersBatch> = {
  async WebsiteCreated(e, { trx, dirty }) {
    await trx.raw(
      `insert into rm_analysis_entities (website_id, entity_id, slot, is_self, name, identifiers, url) values (?, ?, 0, true, ?, '{}', ?) on conflict do nothing`,
      [e.data.website_id, e.data.website_id, e.data.name, e.data.url],
    );
    // the site row, for the website's list as it stands; a provisioned website's competitors (its catalogue stream)
    // may have been applied before it, leaving a row (and facts) laid out without the brand: those are derived again
    // for the list with the brand
    const r = await trx.raw(
      `insert into rm_fact_sites (website_id, version, generation, entities) select ?, 0, 0, ${siteEntityIdsSql('?::uuid')}
       on conflict (website_id) do nothing returning website_id`,
      [e.data.website_id, e.data.website_id],
    );
    if (!r.rows.length) dirty.add(e.data.website_id);
  },
  async CompetitorAdded(e, { trx, dirty }) {
    const w = catalogWebsiteOf(e);
    await trx.raw(
      `insert into rm_analysis_entities (website_id, entity_id, slot, is_self, name, identifiers, url)
       select ?, ?, coalesce(max(slot), 0) + 1, false, ?, ?, ? from rm_analysis_entities where website_id = ?
       on conflict do nothing`,
      [w, e.data.competitor_id, e.data.name, e.data.identifiers, e.data.url, w],
    );
    dirty.add(w);
  },
  async CompetitorRenamed(e, { trx, dirty }) {
    await trx('rm_analysis_entities')
      .where({ website_id: catalogWebsiteOf(e), entity_id: e.data.competitor_id })
      .update({ name: e.data.name });
    dirty.add(catalogWebsiteOf(e));
  },
  async CompetitorIdentifiersChanged(e, { trx, dirty }) {
    await trx('rm_analysis_entities')
      .where({ website_id: catalogWebsiteOf(e), entity_id: e.data.competitor_id })
      .update({ identifiers: e.data.identifiers });
    dirty.add(catalogWebsiteOf(e));
  },
  async CompetitorRemoved(e, { trx, dirty }) {
    await trx('rm_analysis_entities')
      .where({ website_id: catalogWebsiteOf(e), entity_id: e.data.competitor_id })
      .update({ removed: true });
    dirty.add(catalogWebsiteOf(e));
  },
  ResponseRecorded(e, { recorded }) {
    recorded.push(e);
  },
};
