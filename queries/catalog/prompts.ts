import type { Knex } from 'knex';

import type { Prompt } from './views';
import { iso } from '../timestamps';

export type { Prompt } from './views';

const view = (r: Prompt & { created_at: Date | string }): Prompt => ({
  id: r.id,
  text: r.text,
  topic_id: r.topic_id,
  type: r.type,
  status: r.status,
  tags: r.tags,
  created_at: iso(r.created_at),
});

const columns = ['id', 'text', 'topic_id', 'type', 'status', 'tags', 'created_at'] as const;

/** A website's prompts, active and paused, in creation order; soft-deleted ones are left out. */
export async function listPrompts(db: Knex, websiteId: string): Promise<Prompt[]> {
  const rows = await db('rm_prompts').where('website_id', websiteId).whereNull('soft_deleted_at').orderBy('seq').select(columns);
  return rows.map(view);
}

/** The texts of the website's prompts among `ids` that are not soft-deleted, by id. */
export async function livePromptTexts(db: Knex, websiteId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = (await db('rm_prompts')
    .where('website_id', websiteId)
    .whereIn('id', [...ids])
    .whereNull('soft_deleted_at')
    .select('id', 'text')) as {
    id: string;
    text: string;
  }[];
  return new Map(rows.map((p) => [p.id, p.text]));
}

export async function getPrompt(db: Knex, websiteId: string, id: string): Promise<Prompt | undefined> {
  const r = await db('rm_prompts').where({ website_id: websiteId, id }).whereNull('soft_deleted_at').first(columns);
  return r ? view(r) : undefined;
}
