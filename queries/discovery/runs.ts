import type { Knex } from 'knex';
import type { DiscoveryRunView } from './views';
import { iso, isoOrNull } from '../timestamps';
import { newestFirst } from '../paging';

function view(r: any): DiscoveryRunView {
  return {
    run_id: r.id,
    website_id: r.website_id,
    name: r.name,
    status: r.status,
    sources: r.sources,
    locale: r.locale,
    country: r.country,
    prompt_count_min: r.prompt_count_min,
    prompt_count_max: r.prompt_count_max,
    created_at: iso(r.created_at),
    completed_at: isoOrNull(r.completed_at),
    prompts: r.prompts ?? [],
    unavailable_sources: r.unavailable_sources ?? [],
    accepted_indices: r.accepted ?? [],
    error: r.error ?? null,
  };
}

/** A website's runs, newest first, at most `limit`. */
export async function listDiscoveryRuns(db: Knex, organizationId: string, websiteId: string, limit: number): Promise<DiscoveryRunView[]> {
  const rows = await db('rm_discovery_runs')
    .where({ organization_id: organizationId, website_id: websiteId })
    .orderBy(newestFirst('created_at', 'id'))
    .limit(limit);
  return rows.map(view);
}

/** One run of the organization (null: none, or another organization's). */
export async function getDiscoveryRun(db: Knex, organizationId: string, runId: string): Promise<DiscoveryRunView | null> {
  const r = await db('rm_discovery_runs').where({ id: runId, organization_id: organizationId }).first();
  return r ? view(r) : null;
}
