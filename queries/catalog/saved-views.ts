import type { Knex } from 'knex';

import type { SavedView } from './views';

export type { SavedView } from './views';

const columns = ['id', 'name', 'filters'] as const;

/** A website's saved dashboard views with their filters as stored. */
export async function listSavedViews(db: Knex, websiteId: string): Promise<SavedView[]> {
  return db('rm_saved_views').where('website_id', websiteId).orderBy('seq').select(columns);
}

/** A view of that website, or undefined (404 'Saved view not found' to the caller). */
export async function getSavedView(db: Knex, websiteId: string, id: string): Promise<SavedView | undefined> {
  return db('rm_saved_views').where({ website_id: websiteId, id }).first(columns);
}
