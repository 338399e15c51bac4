import type { Knex } from 'knex';
import { citedHosts, hostsNaming, nameKey, namesPutForward } from '../src/analysis/entity-quality';
import type { EventOf } from '../src/domain/events';
import { type EventHandlers, handledTypes, migrateSql, type Projection } from '../src/eventstore/projection';
import type { TypedEvent } from '../src/eventstore/port';

/** Examples kept per name and day, and cited domains kept per name and day (the listing shows at most 3 examples). */
const EXAMPLES = 3;
const DOMAINS = 20;

/** Spans of days summed beside the day rows (aligned on multiples of their length since 1970-01-01): a range is read as a few spans and the days at its edges. */
export const SPANS = [64, 16, 4] as const;
const DAY_MS = 86_400_000;
const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
const dayOf = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);
/** The first day of the span of this length holding the day. */
export const spanStart = (day: string, span: number) => dayOf(Math.floor(dayNumber(day) / span) * span);

/**
 * The range's days (inclusive) as whole spans and single days: the longest aligned span that fits at each step, so a
 * 90-day range is about ten pieces. `span` 1 is a day row.
 */
export function cover(from: string, to: string): { span: number; day: string }[] {
  const out: { span: number; day: string }[] = [];
  const last = dayNumber(to);
  for (let a = dayNumber(from); a <= last; ) {
    const span = SPANS.find((s) => a % s === 0 && a + s - 1 <= last) ?? 1;
    out.push({ span, day: dayOf(a) });
    a += span;
  }
  return out;
}

/** One name's answers on one day (or in one span), as a batch gathers them before one upsert. */
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

/** A span's row: its examples the latest days' first (each with its day), as the span's day rows read in a range give them. */
interface SpanRow extends DayRow {
  span: number;
  example_days: string[];
}

interface Batch {
  trx: Knex.Transaction;
  days: Map<string, DayRow>;
  spans: Map<string, SpanRow>;
}

/** The answer's name counted in a row (a day's or a span's). */
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

const catalogSite = (e: TypedEvent) => (e.streamId.startsWith('catalog-') ? e.streamId.slice('catalog-'.length) : (e.metadata.website_id ?? ''));
const keysOf = (name: string, identifiers: readonly string[]) => [...new Set([name, ...identifiers].map(nameKey).filter(Boolean))];

function gather(b: Batch, e: TypedEvent<EventOf<'ResponseRecorded'>>): void {
  const d = e.data;
  const names = namesPutForward(d.text);
  if (!names.length) return;
  const hosts = citedHosts(d.citations, d.text);
  const day = d.run_at.slice(0, 10);
  for (const n of names) {
    const id = `${d.website_id}|${n.key}|${day}`;
    let r = b.days.get(id);
    if (!r) b.days.set(id, (r = newRow(d.website_id, n.key, day, n.name, d.run_at)));
    count(r, n.name, d.run_at, hosts);
    if (r.examples.length < EXAMPLES) r.examples.push(d.response_id);
    for (const span of SPANS) {
      const start = spanStart(day, span);
      const sid = `${d.website_id}|${n.key}|${span}|${start}`;
      let x = b.spans.get(sid);
      if (!x) b.spans.set(sid, (x = { ...newRow(d.website_id, n.key, start, n.name, d.run_at), span, example_days: [] }));
      count(x, n.name, d.run_at, hosts);
      // after the examples of later days and of this day so far: the order of the span's day rows read latest first
      const at = x.example_days.findIndex((e) => e < day);
      const i = at < 0 ? x.examples.length : at;
      if (i < EXAMPLES) {
        x.examples.splice(i, 0, d.response_id);
        x.example_days.splice(i, 0, day);
        x.examples.length = Math.min(x.examples.length, EXAMPLES);
        x.example_days.length = x.examples.length;
      }
    }
  }
}

async function flush(b: Batch): Promise<void> {
  await flushSpans(b);
  if (!b.days.size) return;
  const rows = [...b.days.values()];
  b.days.clear();
  await b.trx.raw(
    `insert into rm_suggestion_days as d (website_id, key, day, name, answers, first_seen, last_seen, examples, domains)
     select website_id, key, day, name, answers, first_seen, last_seen, examples, domains
       from jsonb_to_recordset(?::jsonb) as x(website_id uuid, key text, day date, name text, answers int,
         first_seen timestamptz, last_seen timestamptz, examples uuid[], domains text[])
     on conflict (website_id, key, day) do update set
       answers = d.answers + excluded.answers,
       name = case when excluded.first_seen < d.first_seen then excluded.name else d.name end,
       first_seen = least(d.first_seen, excluded.first_seen),
       last_seen = greatest(d.last_seen, excluded.last_seen),
       examples = (d.examples || excluded.examples)[1:${EXAMPLES}],
       domains = (select coalesce(array_agg(x order by x), '{}') from (select distinct unnest(d.domains || excluded.domains) as x limit ${DOMAINS}) u)`,
    [JSON.stringify(rows)],
  );
}

async function flushSpans(b: Batch): Promise<void> {
  if (!b.spans.size) return;
  const rows = [...b.spans.values()];
  b.spans.clear();
  // examples merged by day, latest first, the stored ones before the batch's within a day (they arrived first)
  await b.trx.raw(
    `insert into rm_suggestion_spans as d (website_id, key, span, day, name, answers, first_seen, last_seen, examples, example_days, domains)
     select website_id, key, span, day, name, answers, first_seen, last_seen, examples, example_days, domains
       from jsonb_to_recordset(?::jsonb) as x(website_id uuid, key text, span int, day date, name text, answers int,
         first_seen timestamptz, last_seen timestamptz, examples uuid[], example_days date[], domains text[])
     on conflict (website_id, span, day, key) do update set
       answers = d.answers + excluded.answers,
       name = case when excluded.first_seen < d.first_seen then excluded.name else d.name end,
       first_seen = least(d.first_seen, excluded.first_seen),
       last_seen = greatest(d.last_seen, excluded.last_seen),
       (examples, example_days) = (
         select case when excluded.example_days[cardinality(excluded.example_days)] > d.example_days[1] or cardinality(d.examples) = 0
                  then (excluded.examples || d.examples)[1:${EXAMPLES}] else coalesce(array_agg(e order by dd desc, o), '{}') end,
                case when excluded.example_days[cardinality(excluded.example_days)] > d.example_days[1] or cardinality(d.examples) = 0
                  then (excluded.example_days || d.example_days)[1:${EXAMPLES}] else coalesce(array_agg(dd order by dd desc, o), '{}') end
           from (select e, dd, o from (
                   select e, dd, o from unnest(d.examples, d.example_days) with ordinality as u(e, dd, o)
                   union all
                   select e, dd, o + ${EXAMPLES} from unnest(excluded.examples, excluded.example_days) with ordinality as v(e, dd, o)
                 ) m order by dd desc, o limit ${EXAMPLES}) t),
       domains = case when excluded.domains <@ d.domains then d.domains
         else (select coalesce(array_agg(x order by x), '{}') from (select distinct unnest(d.domains || excluded.domains) as x limit ${DOMAINS}) u) end`,
    [JSON.stringify(rows)],
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

/** The columns a day row and a span row share. */
const COUNTED =
  'name text not null, answers int not null, first_seen timestamptz not null, last_seen timestamptz not null, examples uuid[] not null,';

const handlers: EventHandlers<Batch> = {
  ResponseRecorded: (e, b) => gather(b, e),
  async WebsiteCreated(e, { trx }) {
    await setEntity(trx, e.data.website_id, e.data.website_id, e.data.name, []);
  },
  async CompetitorAdded(e, { trx }) {
    await setEntity(trx, catalogSite(e), e.data.competitor_id, e.data.name, e.data.identifiers);
  },
  async CompetitorRenamed(e, { trx }) {
    await changeEntity(trx, catalogSite(e), e.data.competitor_id, { name: e.data.name });
  },
  async CompetitorIdentifiersChanged(e, { trx }) {
    await changeEntity(trx, catalogSite(e), e.data.competitor_id, { identifiers: e.data.identifiers });
  },
  async CompetitorRemoved(e, { trx }) {
    await trx('rm_suggestion_entities')
      .where({ website_id: catalogSite(e), entity_id: e.data.competitor_id })
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
  version: 2,
  tables: ['rm_suggestion_days', 'rm_suggestion_spans', 'rm_suggestion_entities', 'rm_suggestion_dismissed', 'rm_suggestion_announced'],
  handles: handledTypes(handlers),
  migrate: migrateSql(`
    create table if not exists rm_suggestion_days (
      website_id uuid not null,
      key text not null,
      day date not null,
      ${COUNTED}
      domains text[] not null,
      primary key (website_id, day, key)
    );
    create index if not exists rm_suggestion_days_key on rm_suggestion_days (website_id, key);
    create table if not exists rm_suggestion_spans (
      website_id uuid not null,
      key text not null,
      span int not null,
      day date not null,
      ${COUNTED}
      example_days date[] not null,
      domains text[] not null,
      primary key (website_id, span, day, key)
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
    const b: Batch = { trx, days: new Map(), spans: new Map() };
    for (const e of events) {
      const h = handlers[e.type] as ((e: TypedEvent, b: Batch) => Promise<void> | void) | undefined;
      await h?.(e, b);
    }
    await flush(b);
  },
};
