import type { Knex } from 'knex';
import { BY_DOMAIN, BY_URL, domainOfNormalized } from '../../projections/answers/evidence';
import { utcDay } from '../../src/domain/dates';
import { comparableHost, hostOf, isComparableHostWithin } from '../../src/domain/urls';
import { type PageRequest, pageInfo, pageRows } from '../paging';
import { trackedEntities } from '../responses/list';
import { dayNumber, sourceCounts } from './source-index';
import type { SearchQueryList, SourcePage } from './views';

export interface SourcesRequest {
  websiteId: string;
  start?: Date;
  end?: Date;
  models?: string[];
  groupBy: 'domain' | 'url';
}

/**
 * Retrieved and cited counts per domain or normalized URL over whole UTC days (rm_source_days, held in memory: ./source-index), sorted by cited
 * desc, retrieved desc, then the key; each with the entity whose domain it equals or lies under (the nearest).
 */
export async function sources(db: Knex, r: SourcesRequest, page: PageRequest): Promise<SourcePage> {
  const rows = await sourceCounts(
    db,
    r.websiteId,
    r.groupBy === 'domain' ? BY_DOMAIN : BY_URL,
    { fromDay: r.start ? dayNumber(utcDay(r.start)) : null, toDay: r.end ? dayNumber(utcDay(r.end)) : null, models: r.models ?? null },
    page.page_num * page.page_size,
    page.page_size + 1,
  );
  // each entity's domain and each row's host parsed once (not once per pair: 2 URL parses a pair were most of a warm read)
  const entities = (await trackedEntities(db, r.websiteId)).flatMap((e) => {
    const domain = e.url ? hostOf(e.url) : null;
    return domain ? [{ id: e.id, is_self: e.is_self, domain, comparable: comparableHost(domain) }] : [];
  });
  const entityOf = (host: string) => {
    const h = comparableHost(host);
    let best: (typeof entities)[number] | undefined;
    for (const e of entities) if (isComparableHostWithin(h, e.comparable) && (!best || e.domain.length > best.domain.length)) best = e;
    return best;
  };
  const data = pageRows(rows, page).map((x) => {
    const e = entityOf(r.groupBy === 'domain' ? x.key : domainOfNormalized(x.key));
    const counts = {
      retrieved: x.retrieved,
      cited: x.cited,
      cited_when_retrieved: x.retrieved === 0 ? null : (100 * x.cited) / x.retrieved,
      is_self: e?.is_self ?? false,
      entity_id: e?.id ?? null,
    };
    return r.groupBy === 'domain' ? { domain: x.key, ...counts } : { url: x.key, ...counts };
  });
  return { data, ...pageInfo(rows, page) };
}

export interface SearchQueriesRequest {
  websiteId: string;
  start?: Date;
  end?: Date;
  promptId?: string;
}

/** The queries the engines searched, compared case-insensitively after trimming, most answers first, then the query. */
export async function searchQueries(db: Knex, r: SearchQueriesRequest): Promise<SearchQueryList> {
  const where = ['website_id = ?'];
  const bindings: Knex.RawBinding[] = [r.websiteId];
  if (r.start) where.push('run_at >= ?') && bindings.push(r.start);
  if (r.end) where.push('run_at <= ?') && bindings.push(r.end);
  if (r.promptId) where.push('prompt_id = ?') && bindings.push(r.promptId);
  const res = await db.raw(
    `select * from (
       select (array_agg(query order by run_at, response_id))[1] as query, count(*)::int as answers,
              array_agg(distinct model order by model) as models, min(run_at) as first_seen, max(run_at) as last_seen
         from rm_response_queries where ${where.join(' and ')} group by qkey
     ) q order by answers desc, query collate "C"`,
    bindings,
  );
  return {
    data: (res.rows as { query: string; answers: number; models: string[]; first_seen: Date; last_seen: Date }[]).map((x) => ({
      query: x.query,
      answers: x.answers,
      models: x.models,
      first_seen: x.first_seen.toISOString(),
      last_seen: x.last_seen.toISOString(),
    })),
  };
}
