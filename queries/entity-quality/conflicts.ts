import type { Knex } from 'knex';
import { iso } from '../timestamps';
import type { ConflictView } from './views';

const COLUMNS = ['id', 'response_id', 'fact_id', 'fact_text', 'answer_excerpt', 'model', 'detected_at', 'status'];

const view = (r: Record<string, any>): ConflictView => ({
  id: r.id,
  response_id: r.response_id,
  fact_id: r.fact_id,
  fact_text: r.fact_text,
  answer_excerpt: r.answer_excerpt,
  model: r.model,
  detected_at: iso(r.detected_at),
  status: r.status,
});

/** A website's conflicts in one status, newest first. */
export async function listConflicts(db: Knex, websiteId: string, status: ConflictView['status']): Promise<ConflictView[]> {
  const rows = await db('rm_fact_conflicts')
    .where({ website_id: websiteId, status })
    .orderBy([{ column: 'detected_at', order: 'desc' }, 'id'])
    .select(COLUMNS);
  return rows.map(view);
}

export async function getConflict(db: Knex, websiteId: string, id: string): Promise<ConflictView | undefined> {
  const r = await db('rm_fact_conflicts').where({ website_id: websiteId, id }).first(COLUMNS);
  return r && view(r);
}

/** The conflicts of one fact, in every status, with their websites (a fact is one website's). */
export async function conflictsOfFact(db: Knex, factId: string): Promise<{ id: string; website_id: string }[]> {
  return db('rm_fact_conflicts').where({ fact_id: factId }).select('id', 'website_id');
}

/** Where a conflict addressed by id alone lives (null: unknown). */
export async function locateConflict(db: Knex, id: string): Promise<{ organization_id: string; website_id: string } | null> {
  return (await db('rm_fact_conflicts').where({ id }).first('organization_id', 'website_id')) ?? null;
}
