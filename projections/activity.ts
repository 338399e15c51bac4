import type { Knex } from 'knex';
import type { EventType } from '../src/domain/events';
import type { TypedEvent } from '../src/eventstore/port';
import { copyRows, type Projection, migrateSql } from '../src/eventstore/projection';

export interface FeedEntry {
  entity_type: string;
  change_type: string;
  /** null: too many to list, re-list the website */
  entity_ids: string[] | null;
  /** overrides the event's website (organization-level changes have none) */
  website_id?: string | null;
}

/** A feed entry; website_id null for an organization-level change, left out for the event's own website. */
export const entry = (entity_type: string, change_type: string, entity_ids: string[] | null, website_id?: string | null): FeedEntry =>
  website_id === undefined ? { entity_type, change_type, entity_ids } : { entity_type, change_type, entity_ids, website_id };

/** A change's own id plus the ids it carried along (a topic's prompts); null (re-list the website) past 100. */
export const affected = (id: string, carried: string[]) => (carried.length < 100 ? [id, ...carried] : null);

/** A Postgres array literal (each element quoted), so a list of ids travels as one element of a text[] column array. */
const pgArray = (xs: string[]) => `{${xs.map((x) => `"${x.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

type Of<T extends EventType> = Extract<TypedEvent, { type: T }>;

/**
 * An event type's feed entry (null: this event of the type is no change of a resource, a job end of a kind the feed
 * does not show), and every `{entity_type}.{change_type}` it can be: the words a webhook subscribes to.
 */
type Mapper<T extends EventType> = ((e: Of<T>) => FeedEntry | null) & { readonly words: readonly string[] };

/**
 * Every event of the type is one entry: its entity type and change, the ids it names, and its website: null for an
 * organization-level change, `'website_id'` for the one the event's data names, left out for the event's own.
 */
export const entryOf = <T extends EventType>(
  entity_type: string,
  change_type: string,
  ids: (e: Of<T>) => string[] | null,
  website?: null | (keyof Of<T>['data'] & 'website_id'),
): Mapper<T> =>
  Object.assign((e: Of<T>) => entry(entity_type, change_type, ids(e), website && (e.data as { website_id: string | null }).website_id), {
    words: [`${entity_type}.${change_type}`],
  });

/** An event type whose entry's words depend on the event: every word it can be, and the mapping. */
export const entriesOf = <T extends EventType>(words: readonly string[], map: (e: Of<T>) => FeedEntry | null): Mapper<T> =>
  Object.assign(map, { words });

/** Event types that change a resource, each as a feed entry: an area's manifest maps its own (src/areas/). */
export type FeedMapping = { [T in EventType]?: Mapper<T> };

const COLUMNS = [
  'id',
  'organization_id',
  'website_id',
  'entity_type',
  'change_type',
  'entity_ids',
  'via_api_key',
  'api_key_id',
  'actor_user_id',
  'actor_kind',
  'created_at',
];
type FeedRow = (string | boolean | null)[];

/** An event's row of rm_activity (COLUMNS, entity_ids as an array literal), or null when the feed has no entry for it. */
function feedRow(feed: FeedMapping, e: TypedEvent): FeedRow | null {
  const map = feed[e.type] as Mapper<EventType> | undefined;
  if (!map) return null;
  const entry = map(e as never);
  if (!entry) return null;
  const actor = e.metadata.actor;
  return [
    e.id,
    e.metadata.organization_id,
    entry.website_id !== undefined ? entry.website_id : (e.metadata.website_id ?? null),
    entry.entity_type,
    entry.change_type,
    entry.entity_ids === null ? null : pgArray(entry.entity_ids),
    actor.kind === 'api_key',
    actor.api_key_id,
    actor.user_id,
    actor.kind,
    e.metadata.time,
  ];
}

async function writeFeed(trx: Knex.Transaction, rows: FeedRow[], rebuilding: boolean): Promise<void> {
  // a rebuild has no row to skip (the unique index is dropped, every event is new): COPY, on a Postgres server
  if (rebuilding && (await copyRows(trx, 'rm_activity', COLUMNS, rows))) return;
  // one column array per field and one INSERT … SELECT unnest: a rebuild spends a third less CPU than a knex multi-row insert
  const cols: unknown[][] = COLUMNS.map(() => []);
  for (const row of rows) for (let i = 0; i < row.length; i++) cols[i].push(row[i]);
  await trx.raw(
    `insert into rm_activity (${COLUMNS.join(', ')})
     select id, org, site, et, ct, ids::uuid[], via, key, usr, kind, at
       from unnest(?::uuid[], ?::uuid[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::boolean[], ?::uuid[], ?::uuid[], ?::text[], ?::timestamptz[])
         as t(id, org, site, et, ct, ids, via, key, usr, kind, at)
     ${rebuilding ? '' : 'on conflict (id) do nothing'}`,
    cols as unknown as readonly Knex.RawBinding[],
  );
}

/** The unique index on id (tables made before the rebuild hook dropped it carry it as the constraint of that name). */
async function uniqueId(db: Knex): Promise<void> {
  if ((await db.raw(`select to_regclass('rm_activity_id_key') is not null as has`)).rows[0].has) return;
  try {
    await db.raw('create unique index if not exists rm_activity_id_key on rm_activity (id)');
  } catch (err) {
    if ((err as { code?: string }).code !== '23505') throw err;
    // a rebuild wrote an event id twice (a store that let one id into two streams): keep the first, as ON CONFLICT does
    await db.raw('delete from rm_activity a using rm_activity b where a.id = b.id and a.seq > b.seq');
    await db.raw('create unique index if not exists rm_activity_id_key on rm_activity (id)');
  }
}

/** The activity feed: `feed`, every area's mapping of its events (the registry composes it and builds this read model). */
export const activityProjection = (feed: FeedMapping): Projection => {
  const projection: Projection = {
    name: 'activity',
    version: 1,
    tables: ['rm_activity'],
    handles: Object.keys(feed) as EventType[],
    rebuild: {
      // a rebuild writes every row once: one index build at the end is cheaper than a million index inserts (the unique
      // index on id most of all: a random uuid per row, and ON CONFLICT probes it before every insert)
      async before(db) {
        await db.raw(`alter table rm_activity drop constraint if exists rm_activity_id_key;
        drop index if exists rm_activity_id_key; drop index if exists rm_activity_org_time; drop index if exists rm_activity_site_time`);
      },
      async after(db) {
        await projection.migrate(db);
      },
    },
    migrate: migrateSql(
      `
      create table if not exists rm_activity (
        seq bigserial primary key,
        id uuid not null,
        organization_id uuid not null,
        website_id uuid,
        entity_type text not null,
        change_type text not null,
        entity_ids uuid[],
        via_api_key boolean not null,
        api_key_id uuid,
        actor_user_id uuid,
        actor_kind text not null,
        created_at timestamptz not null
      )`,
      // after a rebuild these are three sorts of the whole table: each on its own connection, they run side by side
      (db) =>
        Promise.all([
          db.raw('create index if not exists rm_activity_org_time on rm_activity (organization_id, created_at, seq)'),
          db.raw('create index if not exists rm_activity_site_time on rm_activity (website_id, created_at, seq)'),
          uniqueId(db),
        ]),
    ),
    // not async: the events are mapped before it returns, and nothing here keeps them while the rows are written
    apply(trx, events, ctx) {
      const rows: FeedRow[] = [];
      for (const e of events) {
        const row = feedRow(feed, e);
        if (row) rows.push(row);
      }
      return rows.length === 0 ? Promise.resolve() : writeFeed(trx, rows, ctx.rebuilding);
    },
  };
  return projection;
};
