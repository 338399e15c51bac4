import type { Knex } from 'knex';

import type { Competitor } from './views';

export type { Competitor } from './views';

const columns = ['id', 'name', 'url', 'normalized_url', 'identifiers'] as const;

/** A website's competitors (removed ones left out), in the order they were added. */
export async function listCompetitors(db: Knex, websiteId: string): Promise<Competitor[]> {
  return db('rm_competitors').where('website_id', websiteId).whereNull('removed_at').orderBy('seq').select(columns);
}

export async function getCompetitor(db: Knex, websiteId: string, id: string): Promise<Competitor | undefined> {
  return db('rm_competitors').where({ website_id: websiteId, id }).whereNull('removed_at').first(columns);
}
