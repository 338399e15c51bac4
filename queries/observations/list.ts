import type { Knex } from 'knex';
import { DomainErrorException, invalid } from '../../src/domain/errors';
import { MODEL_COUNT } from '../../src/domain/models';
import type { Selection } from '../filters';
import type { ObservationPage } from './views';
import { newestFirst } from '../paging';

export type ObservationSort = 'intensity' | 'recent';

/** What the request narrows beyond the shared filters (already resolved into a Selection). */
export interface ObservationRequest {
  /** undefined: every entity (the brand and the current competitors) */
  entity_ids?: string[];
  /** undefined: every attribute */
  attribute_ids?: string[];
  /** undefined: both directions */
  positive?: boolean;
  sort: ObservationSort;
  page_num: number;
  page_size: number;
}

export type { Observation, ObservationPage } from './views';

/** The entities and attributes observations of a website can be about, with the names answers show. */
export interface ObservationTargets {
  entities: Map<string, { name: string; is_website: boolean }>;
  attributes: Map<string, string>;
  /** competitors removed from the website: their observations are no longer listed */
  removedCompetitors: number;
  /** every prompt of the website, soft-deleted ones included (a selection of all of them filters nothing) */
  promptCount: number;
}

export async function observationTargets(db: Knex, website: { id: string; name: string }): Promise<ObservationTargets> {
  // one round trip: the catalogue is small, and this runs on every request
  const r = await db.raw(
    `select
       (select coalesce(json_agg(json_build_array(id, name, removed_at is not null) order by seq), '[]') from rm_competitors where website_id = ?) as competitors,
       (select coalesce(json_agg(json_build_array(id, name) order by seq), '[]') from rm_attributes where website_id = ?) as attributes,
       (select count(*) from rm_prompts where website_id = ?) as prompts`,
    [website.id, website.id, website.id],
  );
  const row = r.rows[0] as { competitors: [string, string, boolean][] | string; attributes: [string, string][] | string; prompts: string | number };
  const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);
  const entities = new Map<string, { name: string; is_website: boolean }>([[website.id, { name: website.name, is_website: true }]]);
  let removedCompetitors = 0;
  for (const [id, name, removed] of json(row.competitors)) {
    if (removed) removedCompetitors++;
    else entities.set(id, { name, is_website: false });
  }
  return { entities, attributes: new Map(json(row.attributes)), removedCompetitors, promptCount: Number(row.prompts) };
}

const fail = (message: string): never => {
  throw new DomainErrorException(invalid(message));
};

/** entity_ids and attribute_ids must be this website's (400 naming the first item that is not). */
export function checkTargets(t: ObservationTargets, r: Pick<ObservationRequest, 'entity_ids' | 'attribute_ids'>): void {
  r.entity_ids?.forEach((id, i) => {
    if (!t.entities.has(id.toLowerCase())) fail(`entity_ids[${i}]: not the website_id or one of its competitors' ids`);
  });
  r.attribute_ids?.forEach((id, i) => {
    if (!t.attributes.has(id.toLowerCase())) fail(`attribute_ids[${i}]: no attribute of this website has this id`);
  });
}

const unique = (ids: string[]) => [...new Set(ids.map((x) => x.toLowerCase()))];

interface Row {
  id: string;
  response_id: string;
  entity_id: string;
  attribute_id: string;
  positive: boolean;
  score: number | null;
  text_span: string;
  model: string;
  created_at: Date;
}

/** A piece of SQL with its bindings. */
interface Sql {
  text: string;
  args: Knex.Value[];
}
const and = (...parts: (Sql | null)[]): Sql => {
  const kept = parts.filter((p): p is Sql => p !== null && p.text !== '');
  return { text: kept.map((p) => p.text).join(' and '), args: kept.flatMap((p) => p.args) };
};
const cond = (text: string, ...args: Knex.Value[]): Sql => ({ text, args });

/**
 * With entity_ids or attribute_ids, up to this many matching rows are first read through by_target: fewer, and they are
 * all of them (sorted, they are every page); as many, and the matches are dense enough for the level walk.
 */
export const TARGET_PROBE = 1000;

/**
 * One page of the observations a selection holds. The page's ids come first from the covering indexes (every filter
 * column is in them, so rows filtered out are never read from the table), then the page's rows are read by id.
 *
 * Sort recent walks by_time from end_date down. Sort intensity walks by_intensity level by level: intensity has at
 * most 901 values (|score| to 3 decimals; 1 for an unscored one), and within one level the index is in created_at
 * order, so each level is entered at end_date directly instead of stepping over the level's rows after the window
 * (a plain ordered scan would, and unscored rows make level 1 big). When entity_ids or attribute_ids are sent, the
 * matches are first read through by_target, up to TARGET_PROBE of them: fewer means all of them, sorted here, which beats
 * walking levels past other entities' rows; otherwise they are dense enough and the levels are walked.
 */
export async function listObservations(
  db: Knex,
  s: Selection,
  t: ObservationTargets,
  r: ObservationRequest,
  tuning: { probe?: number } = {},
): Promise<ObservationPage> {
  const probe = Math.max(0, Math.floor(tuning.probe ?? TARGET_PROBE));
  // schedule_id is one value in every request; it leads the index orders because `schedule_id is null`, unlike `=`,
  // does not tell the planner that the indexes' second column is constant (without it no ordered index scan is planned)
  const scope = and(cond('website_id = ?', s.websiteId), s.scheduleId === null ? cond('schedule_id is null') : cond('schedule_id = ?', s.scheduleId));
  const window = and(s.start ? cond('created_at >= ?', s.start) : null, s.end ? cond('created_at <= ?', s.end) : null);
  const entityIds = r.entity_ids ? unique(r.entity_ids) : t.removedCompetitors > 0 ? [...t.entities.keys()] : null;
  const targets = and(
    entityIds ? cond('entity_id = any(?::uuid[])', entityIds) : null,
    r.attribute_ids ? cond('attribute_id = any(?::uuid[])', unique(r.attribute_ids)) : null,
  );
  const rest = and(
    // every prompt (none soft-deleted) or every model: no condition to evaluate, and none for the planner to misjudge
    s.promptIds.length < t.promptCount ? cond('prompt_id = any(?::uuid[])', s.promptIds) : null,
    s.models && new Set(s.models).size < MODEL_COUNT ? cond('model = any(?::text[])', s.models) : null,
    s.locationIds ? cond('location_id = any(?::uuid[])', s.locationIds) : null,
    r.positive !== undefined ? cond('positive = ?', r.positive) : null,
  );
  const selected = and(scope, window, targets, rest);
  const offset = r.page_num * r.page_size;
  const wanted = offset + r.page_size + 1;
  let page: Sql;
  if (r.sort === 'recent') {
    page = {
      text: `select id, intensity, created_at from rm_observations where ${selected.text} order by schedule_id, created_at desc, id limit ? offset ?`,
      args: [...selected.args, r.page_size + 1, offset],
    };
  } else {
    const level = and(scope, cond('intensity = l.v'), window, targets, rest);
    const walk = (gate: string) => ({
      text: `select x.id, x.intensity, x.created_at from levels l cross join lateral (
          select id, intensity, created_at from rm_observations where ${level.text}
          order by schedule_id, intensity desc, created_at desc, id limit ?) x
        where l.v is not null${gate} limit ?`,
      args: [...level.args, wanted, wanted],
    });
    const levels = {
      text: `levels(v) as (
          (select intensity from rm_observations where ${scope.text} order by schedule_id, intensity desc limit 1)
          union all
          select (select intensity from rm_observations where ${scope.text} and intensity < l.v order by schedule_id, intensity desc limit 1)
          from levels l where l.v is not null)`,
      args: [...scope.args, ...scope.args],
    };
    if (!targets.text) {
      const w = walk('');
      page = { text: `with recursive ${levels.text} ${w.text}`, args: [...levels.args, ...w.args] };
    } else {
      // both lists, the other one complete when not sent: by_target then seeks each entity x attribute x window directly
      const few = and(
        scope,
        cond('entity_id = any(?::uuid[])', entityIds ?? [...t.entities.keys()]),
        cond('attribute_id = any(?::uuid[])', r.attribute_ids ? unique(r.attribute_ids) : [...t.attributes.keys()]),
        window,
        rest,
      );
      const w = walk(' and not (select yes from complete)');
      page = {
        text: `with recursive ${levels.text},
          found as materialized (select id, intensity, created_at from rm_observations where ${few.text} limit ${probe}),
          complete as (select count(*) < ${probe} as yes from found)
          (${w.text})
          union all
          (select id, intensity, created_at from found where (select yes from complete) order by intensity desc, created_at desc, id limit ?)`,
        args: [...levels.args, ...few.args, ...w.args, wanted],
      };
    }
  }
  const sql = `
    select o.id, o.response_id, o.entity_id, o.attribute_id, o.positive, o.score, o.text_span, o.model, o.created_at
    from (${page.text}) p
    join rm_observations o on o.id = p.id
    order by p.${r.sort === 'recent' ? 'created_at desc' : 'intensity desc, p.created_at desc'}, p.id
    ${r.sort === 'recent' ? '' : 'limit ? offset ?'}`;
  const args = r.sort === 'recent' ? page.args : [...page.args, r.page_size + 1, offset];
  const res = await db.raw(sql, args);
  const rows = res.rows as Row[];
  return {
    data: rows.slice(0, r.page_size).map((o) => {
      const e = t.entities.get(o.entity_id);
      return {
        observation_id: o.id,
        response_id: o.response_id,
        entity_id: o.entity_id,
        entity_name: e?.name ?? '',
        is_website: e?.is_website ?? false,
        attribute_id: o.attribute_id,
        attribute_name: t.attributes.get(o.attribute_id) ?? '',
        positive: o.positive,
        score: o.score,
        text_span: o.text_span,
        model: o.model,
        created_at: new Date(o.created_at).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      };
    }),
    page_num: r.page_num,
    page_size: r.page_size,
    has_more: rows.length > r.page_size,
  };
}

/** The latest `limit` observations about an entity of the website, newest first: their spans and answers. */
export async function entitySpans(
  db: Knex,
  websiteId: string,
  entityId: string,
  limit: number,
): Promise<{ id: string; response_id: string; text_span: string }[]> {
  return db('rm_observations')
    .where({ website_id: websiteId, entity_id: entityId })
    .orderBy(newestFirst('created_at', 'id'))
    .limit(limit)
    .select('id', 'response_id', 'text_span');
}
