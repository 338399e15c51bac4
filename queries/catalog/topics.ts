import type { Knex } from 'knex';

import type { ListedTopic as Topic, Topic as TopicView } from './views';

export type { ListedTopic as Topic } from './views';

/** A website's topics (soft-deleted ones left out) with how many live prompts each holds. */
export async function listTopics(db: Knex, websiteId: string): Promise<Topic[]> {
  const rows = await db('rm_topics as t')
    .where('t.website_id', websiteId)
    .whereNull('t.deleted_at')
    .select('t.id', 't.name')
    .select(
      db.raw(
        '(select count(*) from rm_prompts p where p.website_id = t.website_id and p.topic_id = t.id and p.soft_deleted_at is null)::int as prompt_count',
      ),
    )
    .orderBy('t.seq');
  return rows.map((r: Topic) => ({ id: r.id, name: r.name, prompt_count: Number(r.prompt_count) }));
}

/** A live topic of the website (soft-deleted ones are undefined). */
export async function getTopic(db: Knex, websiteId: string, id: string): Promise<TopicView | undefined> {
  return db('rm_topics').where({ website_id: websiteId, id }).whereNull('deleted_at').first('id', 'name');
}

/** The names of the website's topics by id, soft-deleted ones included. */
export async function topicNamesById(db: Knex, websiteId: string): Promise<Map<string, string>> {
  const rows = (await db('rm_topics').where('website_id', websiteId).select('id', 'name')) as TopicView[];
  return new Map(rows.map((t) => [t.id, t.name]));
}
