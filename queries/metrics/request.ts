import type { Knex } from 'knex';
import { orderOf } from '../../projections/site-entities';
import { DEAD_LETTERS } from '../../src/eventstore/dead-letters';
import type { SelectablePrompt, SelectionCatalogue } from '../filters';
import type { Head } from './facts/cache';
import type { MetricEntity } from './metrics';

/**
 * Everything a metric request reads besides the facts' new days, in one statement (one round trip, one snapshot): the
 * website (who may read it), whether a projection set it aside (stale), the catalogue its filters are checked and
 * narrowed against, its tracked entities in their order, and the head of its facts (whose `derived` list is those
 * entities' ids, read in the same snapshot as FactsCache's own head read does).
 */
export interface MetricsRead {
  website: { organization_id: string; status: 'active' | 'paused' | 'deleted' } | null;
  stale: boolean;
  catalogue: SelectionCatalogue;
  /** brand first, then competitors in their order (trackedEntities) */
  entities: MetricEntity[];
  head: Head;
}

interface Row {
  website: MetricsRead['website'];
  stale: boolean;
  prompts: [string, string, string, string[], boolean][];
  locations: string[] | null;
  competitors: string[] | null;
  schedule_found: boolean | null;
  entities: [string, string, boolean][];
  site: { version: string; generation: string; entities: string[]; table: string } | null;
}

/** The statement's parts that a request's filters need (catalogueNeeds), and the read models whose set-aside websites count. */
export async function readForMetrics(
  db: Knex,
  websiteId: string,
  needs: { locations: boolean; competitors: boolean; schedule: string | null },
  reads: readonly string[],
): Promise<MetricsRead> {
  // in the order of the statement's placeholders: the read models, the schedule (if asked), the website
  const bindings: Knex.RawBinding[] = [[...reads]];
  const optional: string[] = [];
  if (needs.locations) {
    optional.push("(select coalesce(json_agg(l.id), '[]') from rm_locations l where l.website_id = w.id) as locations");
  }
  if (needs.competitors) {
    optional.push(`(select coalesce(json_agg(c.id), '[]') from rm_competitors c where c.website_id = w.id and c.removed_at is null) as competitors`);
  }
  if (needs.schedule !== null) {
    optional.push('exists (select 1 from rm_prompt_schedules s where s.website_id = w.id and s.id = ?::uuid) as schedule_found');
    bindings.push(needs.schedule);
  }
  const r = await db.raw(
    `select
       (select json_build_object('organization_id', x.organization_id, 'status', x.status) from rm_websites x where x.id = w.id) as website,
       exists (select 1 from ${DEAD_LETTERS} d where d.website_id = w.id::text and d.projection = any(?::text[])) as stale,
       (select coalesce(json_agg(json_build_array(p.id, p.status, p.type, p.tags, p.soft_deleted_at is not null)), '[]')
          from rm_prompts p where p.website_id = w.id) as prompts,
       (select coalesce(json_agg(json_build_array(a.entity_id, a.name, a.is_self) order by ${orderOf('a')}), '[]')
          from rm_analysis_entities a where a.website_id = w.id and not a.removed) as entities,
       (select json_build_object('version', s.version::text, 'generation', s.generation::text, 'entities', s.entities, 'table', s.tableoid::text)
          from rm_fact_sites s where s.website_id = w.id) as site
       ${optional.map((o) => `, ${o}`).join('')}
     from (select ?::uuid as id) w`,
    [...bindings, websiteId],
  );
  const row = r.rows[0] as Row;
  const prompts: SelectablePrompt[] = [];
  const allPromptIds: string[] = [];
  for (const [id, status, type, tags, deleted] of row.prompts) {
    allPromptIds.push(id);
    if (!deleted) prompts.push({ id, status, type, tags });
  }
  const entities = row.entities.map(([id, name, is_self]) => ({ id, name, is_self }));
  return {
    website: row.website,
    stale: row.stale,
    catalogue: {
      prompts,
      allPromptIds,
      locations: row.locations ?? null,
      competitors: row.competitors ?? null,
      scheduleFound: row.schedule_found === true,
    },
    entities,
    head: {
      version: row.site?.version ?? null,
      generation: row.site?.generation ?? null,
      entities: row.site?.entities ?? null,
      table: row.site?.table ?? null,
      derived: entities.map((e) => e.id),
    },
  };
}

type Needs = Parameters<typeof readForMetrics>[2];

/** A request waiting for its website's next statement. */
interface Waiting {
  needs: Needs;
  resolve: (r: MetricsRead) => void;
  reject: (e: unknown) => void;
}

/** Per database, per `website schedule reads`: the requests waiting while that key's statement runs. */
const queued = new WeakMap<Knex, Map<string, Waiting[]>>();

/**
 * readForMetrics for concurrent requests of one website (group commit, as the rate limiter does it): a request finding
 * no statement of its website running starts one now; requests arriving while one runs wait for it and then share the
 * next one, which asks for every part any of them needs. Each request's snapshot is still taken after it arrived, so
 * it sees every write acknowledged before it (read-your-writes), and what it reads is what its own statement would have
 * read at that moment; under load one statement serves many requests instead of one each.
 */
export function readForMetricsGrouped(db: Knex, websiteId: string, needs: Needs, reads: readonly string[]): Promise<MetricsRead> {
  let groups = queued.get(db);
  if (!groups) queued.set(db, (groups = new Map()));
  const key = `${websiteId} ${needs.schedule ?? ''} ${reads.join(',')}`;
  const g = groups;
  return new Promise<MetricsRead>((resolve, reject) => {
    const waiting = g.get(key);
    if (waiting) {
      waiting.push({ needs, resolve, reject });
      return;
    }
    g.set(key, []);
    void readGroups(db, g, key, websiteId, needs.schedule, reads, [{ needs, resolve, reject }]);
  });
}

async function readGroups(
  db: Knex,
  groups: Map<string, Waiting[]>,
  key: string,
  websiteId: string,
  schedule: string | null,
  reads: readonly string[],
  first: Waiting[],
): Promise<void> {
  for (let batch = first; batch.length > 0; ) {
    // the parts any of them needs: a part one did not ask for is only read, never checked against its filters
    const needs = { locations: batch.some((w) => w.needs.locations), competitors: batch.some((w) => w.needs.competitors), schedule };
    try {
      const r = await readForMetrics(db, websiteId, needs, reads);
      for (const w of batch) w.resolve(r);
    } catch (e) {
      for (const w of batch) w.reject(e);
    }
    batch = groups.get(key) ?? [];
    groups.set(key, []);
  }
  groups.delete(key);
}
