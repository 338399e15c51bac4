import type { Knex } from 'knex';
import { scheduleValue } from '../../src/domain/filters';
import type { Selection } from '../filters';
import { trackedEntities } from '../responses/list';
import { encodeFacts, type FactChunk } from '../../src/analysis/facts';
import { FactsCache, type Head } from './facts/cache';
import { dayName, daysOf, emptySite, putDay, type SiteFacts, sortParts } from './facts/layout';
import { compileSelection, type Counts, type Reads, scanDaily, scanGroups, scanTotal } from './scan';
import { wilsonInterval, Z95 } from './stats';

/** The four metric families (CONTRACT.md, Metrics). */
export const FAMILIES = ['mention-rate', 'share-of-voice', 'citation-rate', 'position'] as const;
export type Family = (typeof FAMILIES)[number];

const caches = new WeakMap<Knex, FactsCache>();
/** The facts held for this database in this process. */
export function factsCache(db: Knex): FactsCache {
  let c = caches.get(db);
  if (!c) caches.set(db, (c = new FactsCache()));
  return c;
}

export interface MetricEntity {
  id: string;
  name: string;
  is_self: boolean;
}

/** The brand and the competitors a selection includes (of `all`, the tracked entities in their order). */
export const chosen = <E extends MetricEntity>(all: E[], s: Selection): E[] => {
  const wanted = s.competitorIds ? new Set(s.competitorIds) : null;
  return all.filter((e) => e.is_self || !wanted || wanted.has(e.id));
};

/** The brand and the competitors a selection includes (every tracked competitor by default), brand first. */
export async function metricEntities(db: Knex, s: Selection): Promise<MetricEntity[]> {
  return chosen(await trackedEntities(db, s.websiteId), s).map((e) => ({ id: e.id, name: e.name, is_self: e.is_self }));
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/** 95% Wilson score interval of x successes in n, in percent; null for n = 0. */
export function wilson(x: number, n: number): [number, number] | null {
  const ci = wilsonInterval(x, n);
  return ci && [round(100 * ci[0]), round(100 * ci[1])];
}

const rate = (x: number, n: number) => (n === 0 ? 0 : round((100 * x) / n));
const sample = (x: number, n: number) => ({ numerator: x, denominator: n, ci95: wilson(x, n) });

/** One entity's values of one family, with the sample they rest on (additive fields beside the spec's). */
function values(family: Family, c: Counts, j: number, mentionsOfAll: number, isSelf: boolean) {
  const m = c.mentioned[j];
  switch (family) {
    case 'mention-rate':
      return {
        mention_rate: rate(m, c.responses),
        relative_mention_rate: rate(m, c.anyMentioned),
        is_self: isSelf,
        sample: { mention_rate: sample(m, c.responses), relative_mention_rate: sample(m, c.anyMentioned) },
      };
    case 'share-of-voice':
      return { share_of_voice: rate(m, mentionsOfAll), is_self: isSelf, sample: { share_of_voice: sample(m, mentionsOfAll) } };
    case 'citation-rate':
      return { citation_rate: rate(c.cited[j], c.responses), is_self: isSelf, sample: { citation_rate: sample(c.cited[j], c.responses) } };
    case 'position': {
      const mean = m === 0 ? null : c.posSum[j] / m;
      let ci95: [number, number] | null = null;
      if (mean !== null && m >= 2) {
        const variance = Math.max(0, (c.posSq[j] - m * mean * mean) / (m - 1));
        const half = (Z95 * Math.sqrt(variance)) / Math.sqrt(m);
        ci95 = [round(mean - half), round(mean + half)];
      }
      return { avg_position: mean === null ? null : round(mean), is_self: isSelf, sample: { avg_position: { mentions: m, ci95 } } };
    }
  }
}

/** Entities keyed by name, as the public API keys them; a name shared by two entities gets the later one's id appended. */
export function keyed(entities: MetricEntity[]): string[] {
  const seen = new Set<string>();
  return entities.map((e) => {
    const key = seen.has(e.name) ? `${e.name} (${e.id})` : e.name;
    seen.add(key);
    return key;
  });
}

function byEntity(family: Family, entities: MetricEntity[], names: string[], c: Counts) {
  let mentionsOfAll = 0;
  for (let j = 0; j < entities.length; j++) mentionsOfAll += c.mentioned[j];
  const out: Record<string, ReturnType<typeof values>> = {};
  entities.forEach((e, j) => {
    out[names[j]] = values(family, c, j, mentionsOfAll, e.is_self);
  });
  return out;
}

/** What the request read already (readForMetrics): the website's tracked entities and its facts head, in one snapshot. */
export interface Read {
  entities: MetricEntity[];
  head: Head;
}

/** The counts each family's values read (values): the scans count only those. */
export const READS: Record<Family, Reads> = {
  'mention-rate': 'mentions',
  'share-of-voice': 'mentions',
  'citation-rate': 'cites',
  position: 'positions',
};

let warmed = false;

/**
 * Decodes and scans a small made-up website once per process (at the runtime's start, about 22 ms of CPU), so V8
 * has compiled the decoding (./facts/layout toDay, copySegment) and the scans before a website's first load. A
 * process's first load ran them interpreted for its first tens of parts (its first 16 parts of the 1.2 M-answer
 * website took 35-180 ms instead of 11-14 at load average 4-6); with it, the 90-day first load took 132-141 ms of the
 * main thread's CPU instead of 147-209 (4 runs each, load average 3.4-5). Nothing of it is kept. Whether it ran now.
 */
export function warmMetrics(): boolean {
  if (warmed) return false;
  warmed = true;
  const E = 11;
  const n = 1024;
  const c: FactChunk = {
    entities: Array.from({ length: E }, (_, e) => `warm-${e}`),
    prompts: Array.from({ length: 31 }, (_, p) => `p${p}`),
    locations: [null, 'l1', 'l2'],
    schedules: [null],
    models: Array.from({ length: 11 }, (_, m) => `m${m}`),
    n,
    t: Uint32Array.from({ length: n }, (_, i) => i * 60_000),
    prompt: Uint16Array.from({ length: n }, (_, i) => i % 31),
    location: Uint16Array.from({ length: n }, (_, i) => i % 3),
    schedule: new Uint16Array(n),
    model: Uint8Array.from({ length: n }, (_, i) => i % 11),
    // about three entities mentioned an answer, one in seven cited
    pos: Uint8Array.from({ length: n * E }, (_, k) => ((k * 7) % 10 < 3 ? 1 + (k % 5) : 0)),
    cite: Uint8Array.from({ length: n * E }, (_, k) => (k % 7 === 0 ? 1 : 0)),
  };
  const entities = c.entities;
  const { meta, data } = encodeFacts(c);
  // as a COPY answer gives them: the dictionaries parsed from JSON, the data a view into a larger buffer
  const parsed = JSON.parse(JSON.stringify(meta));
  const buffer = Buffer.alloc(data.length + 1);
  data.copy(buffer, 1);
  const site = emptySite('warm-up', 1n, 0n, entities);
  for (let day = 0; day < 8; day++) for (let part = 0; part < 2; part++) putDay(site, dayName(20_000 + day), part, parsed, buffer.subarray(1));
  sortParts(site);
  const s: Selection = { websiteId: site.websiteId, scheduleId: null, promptIds: site.prompts.keys };
  for (const family of FAMILIES) scanTotal(site, compileSelection(site, s, entities, { any: family === 'mention-rate', reads: READS[family] }));
  return true;
}

/** `family`: what the counts are for (only mention-rate reads the answers mentioning any entity); none: every count. */
async function prepared(db: Knex, s: Selection, read?: Read, family?: Family) {
  const [site, entities] = read
    ? [await factsCache(db).get(db, s.websiteId, daysOf(s), read.head), chosen(read.entities, s)]
    : await Promise.all([factsCache(db).get(db, s.websiteId, daysOf(s)), metricEntities(db, s)]);
  const q = compileSelection(
    site,
    s,
    entities.map((e) => e.id),
    { any: family === undefined || family === 'mention-rate', reads: family === undefined ? 'all' : READS[family] },
  );
  return { site, entities, names: keyed(entities), q };
}

/** One rolled-up value per entity over the selection. */
export async function cumulative(db: Knex, s: Selection, family: Family, read?: Read) {
  const { site, entities, names, q } = await prepared(db, s, read, family);
  const c = scanTotal(site, q);
  return { data: byEntity(family, entities, names, c), schedule: scheduleValue(s.scheduleId), responses: c.responses };
}

/** One row per UTC day with selected answers, oldest first. */
export async function timeSeries(db: Knex, s: Selection, family: Family, read?: Read) {
  const { site, entities, names, q } = await prepared(db, s, read, family);
  const schedule = scheduleValue(s.scheduleId);
  const data = scanDaily(site, q).map(({ day, counts }) => ({
    date: dayName(day),
    schedule,
    responses: counts.responses,
    metrics: byEntity(family, entities, names, counts),
  }));
  return { data, schedule };
}

export interface ConnectorRow {
  date: string;
  model: string;
  prompt_id: string;
  prompt: string | null;
  location_id: string | null;
  location: string | null;
  entity_id: string;
  entity: string;
  is_self: boolean;
  responses: number;
  mentions: number;
  citations: number;
  position: number | null;
  schedule: string;
}

/**
 * Flat rows for BI tools: per UTC day, model, prompt, location and entity, the answers selected (`responses`), how
 * many mention the entity (`mentions`) and cite it (`citations`) — answers, like the rates — and its mean position.
 * Paged in a total order that every instance and every rebuild gives alike: date, model, prompt id, location id (none
 * first), then the entities as listed (brand first, then competitors in the order they were added).
 */
export async function connectorRows(db: Knex, s: Selection, page: { page_num: number; page_size: number }) {
  const { site, entities, q } = await prepared(db, s);
  const [prompts, locations] = await Promise.all([
    db('rm_prompts').where('website_id', s.websiteId).select('id', 'text'),
    db('rm_locations').where('website_id', s.websiteId).select('id', 'location'),
  ]);
  const promptText = new Map((prompts as { id: string; text: string }[]).map((p) => [p.id, p.text]));
  const locationName = new Map((locations as { id: string; location: string }[]).map((l) => [l.id, l.location]));
  const schedule = scheduleValue(s.scheduleId);
  const from = page.page_num * page.page_size;
  const to = from + page.page_size;
  const rows: ConnectorRow[] = [];
  let index = 0;
  scanGroups(site, q, (day, model, prompt, location, c) => {
    for (let j = 0; j < entities.length; j++, index++) {
      if (index < from || index > to) continue;
      const e = entities[j];
      const promptId = site.prompts.keys[prompt];
      const locationId = site.locations.keys[location];
      rows.push({
        date: dayName(day),
        model: site.models.keys[model],
        prompt_id: promptId,
        prompt: promptText.get(promptId) ?? null,
        location_id: locationId,
        location: locationId === null ? null : (locationName.get(locationId) ?? null),
        entity_id: e.id,
        entity: e.name,
        is_self: e.is_self,
        responses: c.responses,
        mentions: c.mentioned[j],
        citations: c.cited[j],
        position: c.mentioned[j] === 0 ? null : round(c.posSum[j] / c.mentioned[j]),
        schedule,
      });
    }
  });
  const has_more = rows.length > page.page_size;
  return { rows: rows.slice(0, page.page_size), page_num: page.page_num, page_size: page.page_size, has_more, schedule };
}

export type { SiteFacts };
