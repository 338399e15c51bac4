import type { Knex } from 'knex';
import { factTextsByIds } from '../knowledge/knowledge';
import type { SeoJobView } from './views';
import { iso, isoOrNull } from '../timestamps';

type Stored = SeoJobView['recommendations'][number] & { fact_id?: string };

/**
 * One SEO job of a website of the organization; null when there is none (another website's, another organization's).
 * A `facts` recommendation shows its fact's text as the excerpt, read now: once the fact is deleted, the
 * recommendation is gone with it.
 */
export async function getSeoJob(db: Knex, organizationId: string, websiteId: string, jobId: string): Promise<SeoJobView | null> {
  const r = await db('rm_seo_jobs').where({ id: jobId, organization_id: organizationId, website_id: websiteId }).first();
  if (!r) return null;
  const stored = (r.recommendations ?? []) as Stored[];
  const factIds = stored.flatMap((x) => (x.fact_id ? [x.fact_id] : []));
  const texts = factIds.length ? await factTextsByIds(db, websiteId, factIds) : new Map<string, string>();
  const recommendations = stored.flatMap(({ fact_id, ...x }) => {
    if (!fact_id) return [x];
    const text = texts.get(fact_id);
    return text === undefined ? [] : [{ ...x, excerpt: text }];
  });
  return {
    job_id: r.id,
    status: r.status,
    created_at: iso(r.created_at),
    completed_at: isoOrNull(r.completed_at),
    recommendations,
    error: r.error,
  };
}
