import type { Knex } from 'knex';
import { dispatch, type EventHandlers, handledTypes, type Projection, migrateSql } from '../src/eventstore/projection';

/**
 * The listing's indexes (queries/observations/list.ts). Each holds every column a filter reads (INCLUDE), so the page's
 * ids come from an index-only scan that skips filtered-out rows without reading the table:
 * - by_intensity and by_time walk the two sort orders and stop after the page: right when the filters keep many rows;
 * - by_target finds the rows of a few entities and attributes directly, to be sorted: right when they keep few.
 * schedule_id leads after website_id: every request selects exactly one schedule (null = default).
 */
const FILTERS = 'prompt_id, model, location_id, entity_id, attribute_id, positive';
const INDEXES: Record<string, string> = {
  rm_observations_by_intensity: `(website_id, schedule_id, intensity desc, created_at desc, id) include (${FILTERS})`,
  rm_observations_by_time: `(website_id, schedule_id, created_at desc, id) include (intensity, ${FILTERS})`,
  rm_observations_by_target: `(website_id, schedule_id, entity_id, attribute_id, created_at desc, id) include (intensity, prompt_id, model, location_id, positive)`,
};
/** indexes of earlier versions of this file */
const RETIRED = ['rm_observations_intensity', 'rm_observations_recent'];

async function createIndexes(db: Knex) {
  for (const name of RETIRED) await db.raw(`drop index if exists ${name}`);
  for (const [name, def] of Object.entries(INDEXES)) await db.raw(`create index if not exists ${name} on rm_observations ${def}`);
}

async function dropIndexes(db: Knex) {
  for (const name of [...Object.keys(INDEXES), ...RETIRED]) await db.raw(`drop index if exists ${name}`);
}

/** |score| to 3 decimals (what the extractors write; an import may send more), or 1 for an unscored observation. */
export const intensityOf = (score: number | null) => (score === null ? 1 : Math.round(Math.abs(score) * 1000) / 1000);

/** Each handler adds the rows of one event to the batch's rows (inserted together). */
const handlers: EventHandlers<Record<string, unknown>[]> = {
  ObservationsRecorded(e, rows) {
    const at = new Date(Math.floor(Date.parse(e.data.observed_at) / 1000) * 1000).toISOString();
    for (const o of e.data.observations) {
      rows.push({
        id: o.observation_id,
        website_id: e.data.website_id,
        response_id: e.data.response_id,
        prompt_id: e.data.prompt_id,
        location_id: e.data.location_id,
        schedule_id: e.data.schedule_id,
        entity_id: o.entity_id,
        attribute_id: o.attribute_id,
        positive: o.positive,
        score: o.score,
        intensity: intensityOf(o.score),
        text_span: o.text_span,
        model: e.data.model,
        extractor: e.data.extractor,
        created_at: at,
      });
    }
  },
};

/**
 * Attribute observations: one statement an answer made about one entity for one attribute. `intensity` is the
 * strength of wording the `intensity` sort orders by: |score| to 3 decimals, or 1 for an unscored one (the direction
 * rule reads a null score as +1 or -1); at most 901 values, which the listing walks one by one. `created_at` is the answer's time to the second.
 */
export const observationsProjection: Projection = {
  name: 'observations',
  version: 2,
  tables: ['rm_observations'],
  handles: handledTypes(handlers),
  migrate: migrateSql(
    `
      create table if not exists rm_observations (
        id uuid primary key,
        website_id uuid not null,
        response_id uuid not null,
        prompt_id uuid not null,
        location_id uuid,
        schedule_id uuid,
        entity_id uuid not null,
        attribute_id uuid not null,
        positive boolean not null,
        score double precision,
        intensity double precision not null,
        text_span text not null,
        model text not null,
        extractor text not null,
        created_at timestamptz not null
      );`,
    createIndexes,
  ),
  rebuild: {
    before: dropIndexes,
    after: createIndexes,
  },
  async apply(trx, events) {
    const rows: Record<string, unknown>[] = [];
    for (const e of events) dispatch(handlers, e, rows);
    for (let i = 0; i < rows.length; i += 5000) {
      await trx.raw(
        `insert into rm_observations select * from json_to_recordset(?::json) as x(id uuid, website_id uuid, response_id uuid, prompt_id uuid, location_id uuid, schedule_id uuid, entity_id uuid, attribute_id uuid,
           positive boolean, score double precision, intensity double precision, text_span text, model text, extractor text, created_at timestamptz)
         on conflict (id) do nothing`,
        [JSON.stringify(rows.slice(i, i + 5000))],
      );
    }
  },
};
