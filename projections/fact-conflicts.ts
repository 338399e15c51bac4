import type { Knex } from 'knex';
import { dispatch, type EventHandlers, handledTypes, migrateSql, type Projection } from '../src/eventstore/projection';

/** A batch's transaction and its detections not inserted yet (one insert for a run of them). */
interface Batch {
  trx: Knex.Transaction;
  detected: Record<string, string>[];
}

async function insertDetected(b: Batch): Promise<void> {
  if (!b.detected.length) return;
  const rows = b.detected;
  b.detected = [];
  // 11 parameters a row: well under Postgres's 65,535 per statement
  for (let i = 0; i < rows.length; i += 2000)
    await b
      .trx('rm_fact_conflicts')
      .insert(rows.slice(i, i + 2000))
      .onConflict('id')
      .ignore();
}

/** A fact edited (archived for its new text) or rejected closes its open conflicts: they no longer hold. */
const closeOpen = (trx: Knex.Transaction, factId: string, at: string) =>
  trx('rm_fact_conflicts').where({ fact_id: factId, status: 'open' }).update({ status: 'resolved', updated_at: at });

const handlers: EventHandlers<Batch> = {
  FactConflictDetected(e, b) {
    const d = e.data;
    // an erased fact's conflict arrives without its texts on a rebuild: nothing of it is kept
    if (d.fact_text === null || d.answer_excerpt === null) return;
    b.detected.push({
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
    });
  },
  async FactConflictResolved(e, { trx }) {
    await trx('rm_fact_conflicts').where({ id: e.data.conflict_id, status: 'open' }).update({ status: 'resolved', updated_at: e.metadata.time });
  },
  async FactConflictDismissed(e, { trx }) {
    await trx('rm_fact_conflicts').where({ id: e.data.conflict_id, status: 'open' }).update({ status: 'dismissed', updated_at: e.metadata.time });
  },
  async FactArchived(e, { trx }) {
    await closeOpen(trx, e.data.fact_id, e.metadata.time);
  },
  async FactReviewed(e, { trx }) {
    if (e.data.review_status === 'rejected') await closeOpen(trx, e.data.fact_id, e.metadata.time);
  },
  async FactsDeleted(e, { trx }) {
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
export const factConflictsProjection: Projection = {
  name: 'fact_conflicts',
  version: 1,
  tables: ['rm_fact_conflicts'],
  handles: handledTypes(handlers),
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
  // a run of detections is one insert; any other event finds the detections before it in the table
  async apply(trx, events) {
    const b: Batch = { trx, detected: [] };
    for (const e of events) {
      if (e.type !== 'FactConflictDetected') await insertDetected(b);
      await dispatch(handlers, e, b);
    }
    await insertDetected(b);
  },
};
