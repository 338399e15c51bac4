/**
 * `observations`: the first page of POST /api/v1/attributes/observations (sort intensity, page_size 40) over about
 * 1 M attribute observations of one website (`--quick`: 50,000), 90-day ranges with a realistic mix of filters, over
 * HTTP on the real Postgres. The observations go in through the real path: ObservationsRecorded events appended to
 * the event store (1000 answers per append), read into rm_observations by the observations projection.
 */
import { createAttribute } from '../commands/catalog/create-attribute';
import { createSchedule } from '../commands/catalog/create-schedule';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { MODEL_IDS } from '../src/domain/models';
import { comparePositions, type NewEvent, type Position, START } from '../src/eventstore/port';
import { caughtUp, seedAnswerSite } from './answers';
import { fullShape } from './answers-data';
import { rng, seededUuid, systemMetadata } from './generate';
import { cpuMeter, info, nowNs, quantile, report, secondsSince } from './lib';
import type { BenchServer } from './server';
import { serverBench } from './with-server';

export interface ObservationSite {
  websiteId: string;
  competitorIds: string[];
  attributeIds: string[];
  promptIds: string[];
  locationIds: string[];
  scheduleId: string;
  observations: number;
}

const DAY_MS = 86_400_000;
const FIRST = Date.parse('2025-01-01T00:00:00Z');
const DAYS = 365;
const ATTRIBUTES = ['Price', 'Support', 'Ease of use', 'Integrations', 'Reliability', 'Security'];
const WORDS = ['affordable', 'responsive', 'intuitive', 'clunky', 'reliable', 'slow', 'secure', 'expensive', 'flexible', 'limited'];

const must = <T>(r: T) => {
  if (isDomainError(r)) throw new Error(r.message);
  return r as Exclude<T, { kind: string; message: string }>;
};

/**
 * The dataset: the answers bench's website (10 competitors, 100 prompts, 3 locations) plus 6 attributes and a custom
 * schedule; answers spread over 365 days and 11 models, each with 1 to 5 observations (3 on average): the brand in
 * about a third of them, praise 60 %, 15 % never scored, else a magnitude of 0.10 to 1.00; 10 % of the answers belong
 * to the custom schedule. They arrive in time order, as answers are made. Deterministic from the seed.
 */
export async function seedObservations(s: BenchServer, total: number, seed = 11): Promise<ObservationSite> {
  const answerSite = await seedAnswerSite(s, fullShape);
  const websiteId = answerSite.websiteId;
  const ctx = { store: s.rt.store, organizationId: s.organizationId, actor: SYSTEM_ACTOR, websiteId };
  const attributeIds: string[] = [];
  for (const name of ATTRIBUTES) attributeIds.push(must(await createAttribute(ctx, { website_id: websiteId, name })).result.id);
  const sched = must(
    await createSchedule(ctx, { website_id: websiteId, name: 'Weekly deep dive', models: [MODEL_IDS[0], MODEL_IDS[1]], frequency: 'weekly' }),
  );
  await caughtUp(s.rt, sched.position!);
  const competitorIds = (await s.rt.database.db('rm_competitors').where('website_id', websiteId).orderBy('seq').pluck('id')) as string[];
  const site: ObservationSite = {
    websiteId,
    competitorIds,
    attributeIds,
    promptIds: answerSite.ids.promptIds,
    locationIds: answerSite.ids.locationIds,
    scheduleId: sched.result.id,
    observations: 0,
  };

  const r = rng(seed);
  const metadata = systemMetadata(s.organizationId, websiteId, r);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  let made = 0;
  let batchNo = 0;
  const batch = (): NewEvent[] => {
    const events: NewEvent[] = [];
    while (events.length < 1000 && made < total) {
      const response_id = seededUuid(r);
      const n = Math.min(total - made, 1 + Math.floor(r() * 5));
      const observations = Array.from({ length: n }, () => {
        const positive = r() < 0.6;
        const magnitude = r() < 0.15 ? null : Math.round(10 + r() * 90) / 100;
        const w1 = pick(WORDS);
        return {
          observation_id: seededUuid(r),
          entity_id: r() < 0.3 ? websiteId : pick(competitorIds),
          attribute_id: pick(attributeIds),
          positive,
          score: magnitude === null ? null : positive ? magnitude : -magnitude,
          text_span: `reviewers describe it as ${w1} and ${pick(WORDS)} compared with the alternatives they tried`,
        };
      });
      made += n;
      events.push({
        id: seededUuid(r),
        type: 'ObservationsRecorded',
        data: {
          response_id,
          website_id: websiteId,
          prompt_id: pick(site.promptIds),
          location_id: pick(site.locationIds),
          schedule_id: r() < 0.1 ? site.scheduleId : null,
          model: pick(MODEL_IDS),
          // answers arrive as they are made: in time order, as a live website (and a rebuild) writes them
          observed_at: new Date(FIRST + Math.floor((made / total) * DAYS * DAY_MS + r() * 60_000)).toISOString(),
          extractor: 'llm',
          observations,
        },
        metadata,
      });
    }
    return events;
  };

  const t0 = nowNs();
  let last: Position = START;
  // two appends in flight, one stream per append (as the import's observations are)
  const writers = Array.from({ length: 2 }, async () => {
    for (let events = batch(); events.length; events = batch()) {
      const a = await s.rt.store.append(`observations-bench-${batchNo++}`, events, 'no_stream');
      if (comparePositions(a.position, last) > 0) last = a.position;
    }
  });
  await Promise.all(writers);
  const appended = secondsSince(t0);
  await caughtUp(s.rt, last, ['observations']);
  const projected = secondsSince(t0);
  site.observations = Number((await s.rt.database.db('rm_observations').where('website_id', websiteId).count<{ n: string }[]>('* as n'))[0].n);
  info(
    `observations: ${site.observations} observations in ${batchNo} appends of up to 1000 answers: appended in ${appended.toFixed(1)} s, projected ${projected.toFixed(1)} s after the first append (${Math.round(site.observations / projected)} observations/s)`,
  );
  // autovacuum (off on the bench server) would analyze the new table and set its visibility map; do what it would
  const tv = nowNs();
  await s.rt.database.db.raw('vacuum (analyze) rm_observations');
  const size = (
    await s.rt.database.db.raw(`select pg_size_pretty(pg_table_size('rm_observations')) t, pg_size_pretty(pg_indexes_size('rm_observations')) i`)
  ).rows[0];
  info(
    `observations: vacuum (analyze) took ${secondsSince(tv).toFixed(1)} s (what autovacuum does after a bulk insert); table ${size.t}, indexes ${size.i}`,
  );
  return site;
}

export interface FilterCase {
  name: string;
  /** the request body past website_id and the 90-day window */
  body(site: ObservationSite, r: () => number): { filters?: Record<string, unknown>; [k: string]: unknown };
}

const some = <T>(r: () => number, xs: readonly T[], n: number): T[] => {
  const pool = [...xs];
  const out: T[] = [];
  while (out.length < n && pool.length) out.push(pool.splice(Math.floor(r() * pool.length), 1)[0]);
  return out;
};

/** The mix: how a dashboard and an assistant ask (brand, competitor, one trait, criticism, a few models, ...). */
export const CASES: FilterCase[] = [
  { name: 'dates_only', body: () => ({}) },
  { name: 'brand', body: (s) => ({ entity_ids: [s.websiteId] }) },
  { name: 'brand_vs_2_competitors', body: (s, r) => ({ entity_ids: [s.websiteId, ...some(r, s.competitorIds, 2)] }) },
  { name: 'one_attribute', body: (s, r) => ({ attribute_ids: some(r, s.attributeIds, 1) }) },
  { name: 'criticism', body: () => ({ positive: false }) },
  { name: 'two_models', body: (_s, r) => ({ filters: { models: some(r, MODEL_IDS, 2) } }) },
  { name: 'brand_attribute_criticism', body: (s, r) => ({ entity_ids: [s.websiteId], attribute_ids: some(r, s.attributeIds, 1), positive: false }) },
  {
    name: 'competitor_attribute_praise_model',
    body: (s, r) => ({
      entity_ids: some(r, s.competitorIds, 1),
      attribute_ids: some(r, s.attributeIds, 1),
      positive: true,
      filters: { models: some(r, MODEL_IDS, 1) },
    }),
  },
  { name: 'branded_prompts_one_location', body: (s, r) => ({ filters: { prompt_type: 'branded', location_ids: some(r, s.locationIds, 1) } }) },
  { name: 'custom_schedule_brand', body: (s) => ({ entity_ids: [s.websiteId], filters: { schedule_id: s.scheduleId } }) },
];

/** One request's body: a 90-day window inside the year of data, the case's filters. */
export function requestBody(site: ObservationSite, c: FilterCase, r: () => number, sort: 'intensity' | 'recent' = 'intensity') {
  const startDay = Math.floor(r() * (DAYS - 90));
  const start_date = new Date(FIRST + startDay * DAY_MS).toISOString();
  const end_date = new Date(FIRST + (startDay + 90) * DAY_MS - 1000).toISOString();
  const { filters, ...rest } = c.body(site, r);
  return { website_id: site.websiteId, filters: { start_date, end_date, ...filters }, ...rest, sort, page_size: 40 };
}

/** Sequential timed requests over HTTP; each case's durations in ms. */
export async function measure(s: BenchServer, site: ObservationSite, rounds: number, sort: 'intensity' | 'recent' = 'intensity', seed = 5) {
  const r = rng(seed);
  const byCase = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
  const post = async (body: unknown) => {
    const t0 = nowNs();
    const res = await fetch(`${s.url}/api/v1/attributes/observations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': s.key },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as { data?: unknown[]; error?: string };
    const ms = Number(nowNs() - t0) / 1e6;
    if (res.status !== 200) throw new Error(`observations: ${res.status} ${JSON.stringify(json)} for ${JSON.stringify(body)}`);
    return { ms, rows: json.data!.length };
  };
  // warm-up: one round of every case, not counted
  for (const c of CASES) await post(requestBody(site, c, r, sort));
  const empty = new Map<string, number>();
  for (let i = 0; i < rounds; i++) {
    for (const c of CASES) {
      const x = await post(requestBody(site, c, r, sort));
      byCase.get(c.name)!.push(x.ms);
      if (x.rows < 40) empty.set(c.name, (empty.get(c.name) ?? 0) + 1);
    }
  }
  return { byCase, short: empty };
}

const summary = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), max: sorted[sorted.length - 1] };
};

export const observations = serverBench(0, {
  name: 'observations',
  about: 'first page of POST /attributes/observations (intensity, 40 rows) over ~1 M observations: 90-day windows, a mix of filters',
  async run({ s, quick }) {
    const total = quick ? 50_000 : 1_000_000;
    const site = await seedObservations(s, total);
    const rounds = quick ? 10 : 30;
    const cpu = await cpuMeter(s.rt.database.db);
    const t0 = nowNs();
    const { byCase, short } = await measure(s, site, rounds);
    const seconds = secondsSince(t0);
    const c = await cpu.stop();
    const all: number[] = [];
    for (const [name, xs] of byCase) {
      all.push(...xs);
      const q = summary(xs);
      info(
        `observations ${name}: p50 ${q.p50.toFixed(1)} ms, p95 ${q.p95.toFixed(1)} ms, max ${q.max.toFixed(1)} ms${short.get(name) ? ` (${short.get(name)} of ${xs.length} pages had fewer than 40 rows)` : ''}`,
      );
    }
    const q = summary(all);
    const note = `${all.length} requests (${CASES.length} filter cases x ${rounds}, one at a time, over HTTP) on ${site.observations} observations; 90-day windows, sort intensity, page_size 40`;
    report('observations_p95_ms', q.p95, 'ms', { goal: { op: '<=', value: 50 }, note });
    report('observations_p50_ms', q.p50, 'ms');
    report('observations_cpu_us_per_request', (c.nodeUs + c.pgUs) / all.length, 'us', {
      note: `node ${(c.nodeUs / all.length).toFixed(0)} us + Postgres ${(c.pgUs / all.length).toFixed(0)} us; ${(all.length / seconds).toFixed(0)} requests/s one at a time`,
    });
    const recent = await measure(s, site, Math.ceil(rounds / 3), 'recent', 6);
    const recentAll = [...recent.byCase.values()].flat();
    const qr = summary(recentAll);
    report('observations_recent_p95_ms', qr.p95, 'ms', {
      note: `the same mix sorted recent (${recentAll.length} requests); p50 ${qr.p50.toFixed(1)} ms`,
    });
  },
});
