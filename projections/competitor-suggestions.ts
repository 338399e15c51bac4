import type { Knex } from 'knex';
import { answerNamesPutForward, citedHosts, hostsNaming, nameKey } from '../src/analysis/entity-quality';
import type { EventOf } from '../src/domain/events';
import { type EventHandlers, handledTypes, migrateSql, type Projection } from '../src/eventstore/projection';
import type { TypedEvent } from '../src/eventstore/port';
import { catalogWebsiteOf } from './rows';

/** Examples kept per name and day, and cited domains kept per name and day (the listing shows at most 3 examples). */
const EXAMPLES = 3;
const DOMAINS = 20;

/** One name's answers on one day, as a batch gathers them before one upsert. */
interface DayRow {
  website_id: string;
  key: string;
  day: string;
  name: string;
  answers: number;
  first_seen: string;
  last_seen: string;
  examples: string[];
  domains: string[];
}

interface Batch {
  trx: Knex.Transaction;
  days: Map<string, DayRow>;
}

/** The answer's name counted in its day row. */
function count(r: DayRow, name: string, run_at: string, hosts: readonly string[]): void {
  r.answers++;
  if (run_at < r.first_seen) {
    r.first_seen = run_at;
    r.name = name;
  }
  if (run_at > r.last_seen) r.last_seen = run_at;
  for (const h of hostsNaming(name, hosts)) if (r.domains.length < DOMAINS && !r.domains.includes(h)) r.domains.push(h);
}

const newRow = (website_id: string, key: string, day: string, name: string, run_at: string): DayRow => ({
  website_id,
  key,
  day,
  name,
  answers: 0,
  first_seen: run_at,
  last_seen: run_at,
  examples: [],
  domains: [],
});

const keysOf = (name: string, identifiers: readonly string[]) => [...new Set([name, ...identifiers].map(nameKey).filter(Boolean))];

function gather(b: Batch, e: TypedEvent<EventOf<'ResponseRecorded'>>): void {
  const d = e.data;
  const names = answerNamesPutForward(d);
  if (!names.length) return;
  const hosts = citedHosts(d.citations, d.text);
  const day = d.run_at.slice(0, 10);
  for (const n of names) {
    const id = `${d.website_id}|${n.key}|${day}`;
    let r = b.days.get(id);
    if (!r) b.days.set(id, (r = newRow(d.website_id, n.key, day, n.name, d.run_at)));
    count(r, n.name, d.run_at, hosts);
    if (r.examples.length < EXAMPLES) r.examples.push(d.response_id);
  }
}

/**
 * The batch's day rows counted in, and the version of each day they touch and of their websites moved to this
 * transaction's id (unique in the cluster, so a rebuild's rows never take a version a reader holds): the reads hold a
 * website's day rows in memory per day while these are the versions they loaded (queries/entity-quality/suggestion-index.ts).
 */
async function flush(b: Batch): Promise<void> {
  if (!b.days.size) return;
  const rows = [...b.days.values()];
  b.days.clear();
  const days = new Set(rows.map((r) => `${r.website_id}|${r.day}`));
  const sites = [...new Set(rows.map((r) => r.website_id))];
  await b.trx.raw(
    `with v as (select txid_current() as v),
     d as (insert into rm_suggestion_days as d (website_id, key, day, name, answers, first_seen, last_seen, examples, domains)
     select website_id, key, day, name, answers, first_seen, last_seen, examples, domains
       from jsonb_to_recordset(?::jsonb) as x(website_id uuid, key text, day date, name text, answers int,
         first_seen timestamptz, last_seen timestamptz, examples uuid[], domains text[])
     on conflict (website_id, key, day) do update set
       answers = d.answers + excluded.answers,
       name = case when excluded.first_seen < d.first_seen then excluded.name else d.name end,
       first_seen = least(d.first_seen, excluded.first_seen),
       last_seen = greatest(d.last_seen, excluded.last_seen),
       examples = (d.examples || excluded.examples)[1:${EXAMPLES}],
       domains = (select coalesce(array_agg(x order by x), '{}') from (select distinct unnest(d.domains || excluded.domains) as x limit ${DOMAINS}) u)),
     dv as (insert into rm_suggestion_day_versions as t (website_id, day, version)
       select x.w, x.d, v.v from unnest(?::uuid[], ?::date[]) as x(w, d), v
       on conflict (website_id, day) do update set version = excluded.version)
     insert into rm_suggestion_sites as t (website_id, version) select w, v.v from unnest(?::uuid[]) as w, v
       on conflict (website_id) do update set version = excluded.version`,
    [JSON.stringify(rows), [...days].map((x) => x.split('|')[0]), [...days].map((x) => x.split('|')[1]), sites],
  );
}

async function setEntity(trx: Knex.Transaction, websiteId: string, entityId: string, name: string, identifiers: readonly string[]) {
  await trx.raw(
    `insert into rm_suggestion_entities (website_id, entity_id, name, identifiers, keys) values (?, ?, ?, ?, ?)
     on conflict (website_id, entity_id) do update set name = excluded.name, identifiers = excluded.identifiers, keys = excluded.keys`,
    [websiteId, entityId, name, [...identifiers], keysOf(name, identifiers)],
  );
}

async function changeEntity(trx: Knex.Transaction, websiteId: string, entityId: string, change: { name?: string; identifiers?: string[] }) {
  const row = await trx('rm_suggestion_entities').where({ website_id: websiteId, entity_id: entityId }).first('name', 'identifiers');
  if (!row) return;
  await setEntity(trx, websiteId, entityId, change.name ?? row.name, change.identifiers ?? row.identifiers);
}

const handlers: EventHandlers<Batch> = {
  ResponseRecorded: (e, b) => gather(b, e),
  async WebsiteCreated(e, { trx }) {
    await setEntity(trx, e.data.website_id, e.data.website_id, e.data.name, []);
  },
  async CompetitorAdded(e, { trx }) {
    await setEntity(trx, catalogWebsiteOf(e), e.data.competitor_id, e.data.name, e.data.identifiers);
  },
  async CompetitorRenamed(e, { trx }) {
    await changeEntity(trx, catalogWebsiteOf(e), e.data.competitor_id, { name: e.data.name });
  },
  async CompetitorIdentifiersChanged(e, { trx }) {
    await changeEntity(trx, catalogWebsiteOf(e), e.data.competitor_id, { identifiers: e.data.identifiers });
  },
  async CompetitorRemoved(e, { trx }) {
    await trx('rm_suggestion_entities')
      .where({ website_id: catalogWebsiteOf(e), entity_id: e.data.competitor_id })
      .delete();
  },
  async CompetitorSuggested(e, { trx }) {
    await trx('rm_suggestion_announced')
      .insert({ website_id: e.data.website_id, key: e.data.key, announced_at: e.metadata.time })
      .onConflict(['website_id', 'key'])
      .ignore();
  },
  async CompetitorSuggestionDismissed(e, { trx }) {
    await trx('rm_suggestion_dismissed')
      .insert({ website_id: e.data.website_id, key: e.data.key, name: e.data.name, dismissed_at: e.metadata.time })
      .onConflict(['website_id', 'key'])
      .ignore();
  },
};

/**
 * Competitor suggestions (CONTRACT "Answer evidence", Competitor suggestions): the names each answer puts forward,
 * counted per website, name and UTC day with a few example answers and the domains cited beside them; the brand's and
 * tracked competitors' names (kept here from the catalogue's events, so a competitor change re-derives what is
 * excluded) and the dismissed names are left out when read; the names announced in the feed (CompetitorSuggested).
 */
export const competitorSuggestionsProjection: Projection = {
  name: 'competitor_suggestions',
  version: 3,
  tables: [
    'rm_suggestion_days',
    'rm_suggestion_day_versions',
    'rm_suggestion_sites',
    'rm_suggestion_entities',
    'rm_suggestion_dismissed',
    'rm_suggestion_announced',
  ],
  handles: handledTypes(handlers),
  // an answer that puts no name forward counts nowhere
  ignores: (e) => e.type === 'ResponseRecorded' && answerNamesPutForward((e as TypedEvent<EventOf<'ResponseRecorded'>>).data).length === 0,
  migrate: migrateSql(`
    drop table if exists rm_suggestion_spans;
    create table if not exists rm_suggestion_days (
      website_id uuid not null,
      key text not null,
      day date not null,
      name text not null,
      answers int not null,
      first_seen timestamptz not null,
      last_seen timestamptz not null,
      examples uuid[] not null,
      domains text[] not null,
      primary key (website_id, day, key)
    );
    create index if not exists rm_suggestion_days_key on rm_suggestion_days (website_id, key);
    create table if not exists rm_suggestion_day_versions (
      website_id uuid not null,
      day date not null,
      version bigint not null,
      primary key (website_id, day)
    );
    create table if not exists rm_suggestion_sites (
      website_id uuid primary key,
      version bigint not null
    );
    create table if not exists rm_suggestion_announced (
      website_id uuid not null,
      key text not null,
      announced_at timestamptz not null,
      primary key (website_id, key)
    );
    create table if not exists rm_suggestion_entities (
      website_id uuid not null,
      entity_id uuid not null,
      name text not null,
      identifiers text[] not null,
      keys text[] not null,
      primary key (website_id, entity_id)
    );
    create table if not exists rm_suggestion_dismissed (
      website_id uuid not null,
      key text not null,
      name text not null,
      dismissed_at timestamptz not null,
      primary key (website_id, key)
    );`),
  async apply(trx, events) {
    const b: Batch = { trx, days: new Map() };
    for (const e of events) {
      const h = handlers[e.type] as ((e: TypedEvent, b: Batch) => Promise<void> | void) | undefined;
      await h?.(e, b);
    }
    await flush(b);
  },
};
