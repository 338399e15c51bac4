import type { Knex } from 'knex';
import { type EventHandlers, handlerProjection, migrateSql } from '../src/eventstore/projection';

/** A fact edited (archived for its new text) or rejected closes its open conflicts: they no longer hold. */
const closeOpen = (trx: Knex.Transaction, factId: string, at: string) =>
  trx('rm_fact_conflicts').where({ fact_id: factId, status: 'open' }).update({ status: 'resolved', updated_at: at });

const handlers: EventHandlers<Knex.Transaction> = {
  async FactConflictDetected(e, trx) {
    const d = e.data;
    // an erased fact's conflict arrives without its texts on a rebuild: nothing of it is kept
    if (d.fact_text === null || d.answer_excerpt === null) return;
    await trx('rm_fact_conflicts')
      .insert({
        id: d.conflict_id,
        organization_id: e.metadata.organization_id,
        website_id: d.website_id,
        response_id: d.response_id,
        fact_id: d.fact_id,
        fact_text: d.fact_text,
        answer_excerpt: d.answer_excerpt,
        model: d.model,
        status: 'open',
        detected_at: e.metadata.time,
        updated_at: e.metadata.time,
      })
      .onConflict('id')
      .ignore();
  },
  async FactConflictResolved(e, trx) {
    await trx('rm_fact_conflicts').where({ id: e.data.conflict_id, status: 'open' }).update({ status: 'resolved', updated_at: e.metadata.time });
  },
  async FactConflictDismissed(e, trx) {
    await trx('rm_fact_conflicts').where({ id: e.data.conflict_id, status: 'open' }).update({ status: 'dismissed', updated_at: e.metadata.time });
  },
  async FactArchived(e, trx) {
    await closeOpen(trx, e.data.fact_id, e.metadata.time);
  },
  async FactReviewed(e, trx) {
    if (e.data.review_status === 'rejected') await closeOpen(trx, e.data.fact_id, e.metadata.time);
  },
  async FactsDeleted(e, trx) {
    await trx('rm_fact_conflicts')
      .whereIn('fact_id', [...e.data.fact_ids, ...e.data.replaced_ids])
      .delete();
  },
};

/**
 * Fact conflicts (CONTRACT "Answer evidence", Fact conflicts): an answer's sentence about the brand against an
 * approved fact, open until resolved, dismissed, or its fact is edited or rejected; a deleted fact takes its
 * conflicts' rows (their texts are sealed under the fact's subject, so the log keeps nothing readable either).
 */
export const factConflictsProjection = handlerProjection(
  {
    name: 'fact_conflicts',
    version: 1,
    tables: ['rm_fact_conflicts'],
    migrate: migrateSql(`
      create table if not exists rm_fact_conflicts (
        id uuid primary key,
        organization_id uuid not null,
        website_id uuid not null,
        response_id uuid not null,
        fact_id uuid not null,
        fact_text text not null,
        answer_excerpt text not null,
        model text not null,
        status text not null,
        detected_at timestamptz not null,
        updated_at timestamptz not null
      );
      create index if not exists rm_fact_conflicts_site on rm_fact_conflicts (website_id, status, detected_at desc, id);
      create index if not exists rm_fact_conflicts_fact on rm_fact_conflicts (fact_id);`),
  },
  handlers,
);
