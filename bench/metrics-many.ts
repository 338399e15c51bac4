/**
 * Many websites on one server: 2,000 websites of 5,000 answers each (10 M answers) and a facts budget (FACTS_CACHE_MB)
 * smaller than all their facts; the p95 of a random website's cumulative metrics with the budget held, the evictions,
 * and the server's RSS.
 *
 * The websites, competitors and prompts are written through the commands (provisionWebsite); the answers are NOT
 * imported (10 M answers over HTTP would take hours): their metric facts are written straight into the read model
 * (rm_fact_chunks, and the version of rm_fact_sites), encoded by the answers projection's own encoder
 * (FactChunkBuilder, encodeFacts) in parts of PART_ROWS, in multi-row inserts. Nothing else of an answer (texts,
 * citations, rm_responses) exists: a metric read needs only the facts.
 */
import type { Knex } from 'knex';
import { provisionWebsite } from '../commands/websites/provision-website';
import { PART_ROWS } from '../projections/answers/writers';
import { siteEntities } from '../projections/site-entities';
import { encodeFacts, FactChunkBuilder } from '../src/analysis/facts';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { MODEL_IDS } from '../src/domain/models';
import { seededRandom } from '../src/domain/random';
import { factsCache } from '../queries/metrics/metrics';
import { type Bench, cpuMeter, databaseExists, info, keptDatabase, nowNs, quantile, report, secondsSince } from './lib';
import { type BenchServer, startBenchServer } from './server';

const DAY_MS = 86_400_000;
const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

export interface FactSite {
  websiteId: string;
  /** brand first, then competitors: the columns of its facts */
  entities: string[];
  promptIds: string[];
  locationIds: (string | null)[];
}

export interface FactShape {
  answers: number;
  /** the last day with answers; a website's answers fill the days before it, prompts x models x locations a day */
  lastDay: number;
  seed: number;
}

/**
 * Writes `shape.answers` answers' metric facts per website straight into rm_fact_chunks (one answer per prompt, model
 * and location a day, backwards from the last day), then moves each website's version: what the answers projection
 * would have stored for them. Returns the answers written.
 */
export async function writeFacts(db: Knex, sites: FactSite[], shape: FactShape, onProgress?: (sites: number) => void): Promise<number> {
  const r = seededRandom(shape.seed);
  const models = [...MODEL_IDS];
  let pending: unknown[][] = [];
  let written = 0;
  const flush = async () => {
    if (!pending.length) return;
    const rows = pending;
    pending = [];
    await db.raw(
      `insert into rm_fact_chunks (website_id, day, part, version, n, schedule_keys, meta, data) values ${rows.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
      rows.flat() as Knex.RawBinding[],
    );
  };
  for (const [k, site] of sites.entries()) {
    const E = site.entities.length;
    const version = (await db.raw(`select nextval('rm_fact_version')::text as v`)).rows[0].v as string;
    const perDay = site.promptIds.length * models.length * site.locationIds.length;
    let left = shape.answers;
    for (let day = shape.lastDay; left > 0; day--) {
      const n = Math.min(perDay, left);
      left -= n;
      let part = 0;
      let b = new FactChunkBuilder(site.entities);
      for (let i = 0; i < n; i++) {
        if (b.size >= PART_ROWS) {
          pending.push(row(site.websiteId, day, part++, version, b));
          b = new FactChunkBuilder(site.entities);
        }
        // positions: the mentioned entities in a random order; the brand is mentioned less often than the rest
        const mentioned: number[] = [];
        for (let e = 0; e < E; e++) if (r() < (e === 0 ? 0.3 : 0.45)) mentioned.push(e);
        mentioned.sort(() => r() - 0.5);
        b.add({
          t: Math.floor(r() * DAY_MS),
          prompt_id: site.promptIds[i % site.promptIds.length],
          model: models[Math.floor(i / site.promptIds.length) % models.length],
          location_id: site.locationIds[Math.floor(i / (site.promptIds.length * models.length)) % site.locationIds.length],
          schedule_id: null,
          mentions: mentioned.map((e, p) => [e, p + 1] as const),
          cited: mentioned.filter(() => r() < 0.3),
        });
      }
      if (b.size) pending.push(row(site.websiteId, day, part, version, b));
      if (pending.length >= 400) await flush();
    }
    await flush();
    await db('rm_fact_sites').where('website_id', site.websiteId).update({ version });
    written += shape.answers;
    if ((k + 1) % 100 === 0) onProgress?.(k + 1);
  }
  return written;
}

function row(websiteId: string, day: number, part: number, version: string, b: FactChunkBuilder): unknown[] {
  const chunk = b.build();
  const { meta, data } = encodeFacts(chunk);
  const schedules = [...new Set(chunk.schedules.map((s) => s ?? 'default'))];
  return [websiteId, dayName(day), part, version, chunk.n, schedules, JSON.stringify(meta), data];
}

interface ManyShape {
  websites: number;
  answers: number;
  prompts: number;
  competitors: number;
}

/** The websites through the commands (a catalogue stream and the website each), then their lists as the read model holds them. */
async function provisionSites(s: BenchServer, shape: ManyShape): Promise<FactSite[]> {
  const ctx = { store: s.rt.store, organizationId: s.organizationId, actor: SYSTEM_ACTOR };
  let last = null;
  for (let i = 0; i < shape.websites; i++) {
    const w = await provisionWebsite(ctx, {
      name: `Site ${i + 1}`,
      url: `https://www.site${i + 1}.example.com/`,
      competitors: Array.from({ length: shape.competitors }, (_, c) => ({
        name: `Rival ${i + 1}-${c + 1}`,
        url: `https://rival${c + 1}.site${i + 1}.example.net/`,
      })),
      topics: [{ name: 'Main', prompts: Array.from({ length: shape.prompts }, (_, p) => ({ text: `best tool number ${p + 1} for site ${i + 1}` })) }],
    });
    if (isDomainError(w)) throw new Error(w.message);
    last = w.position;
    if ((i + 1) % 500 === 0) info(`metrics-many: ${i + 1} websites provisioned`);
  }
  if (last) await s.rt.waitForReadModels(last, 'all', 600_000);
  const db = s.rt.database.db;
  const ids = (await db('rm_websites').where('organization_id', s.organizationId).orderBy('name').pluck('id')) as string[];
  const entities = await siteEntities(db, ids);
  const prompts = (await db('rm_prompts').whereIn('website_id', ids).orderBy(['website_id', 'text']).select('website_id', 'id')) as {
    website_id: string;
    id: string;
  }[];
  const promptsOf = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const p of prompts) promptsOf.get(p.website_id)!.push(p.id);
  return ids.map((websiteId) => ({
    websiteId,
    entities: entities.get(websiteId)!.map((e) => e.id),
    promptIds: promptsOf.get(websiteId)!,
    locationIds: [null],
  }));
}

interface Kept {
  key: string;
  organizationId: string;
  shape: ManyShape;
  sites: FactSite[];
  lastDay: number;
}

/**
 * The server over the websites: built afresh, or (BENCH_DATASET_DB=<name>) kept in `<name>_many` and reused when its
 * shape is the same.
 */
async function manySites(shape: ManyShape, env: Record<string, string>): Promise<{ s: BenchServer; kept: Kept }> {
  const base = process.env.BENCH_DATASET_DB;
  const keep = base ? `${base}_many` : undefined;
  if (keep && (await databaseExists(keep))) {
    const d = await keptDatabase(keep, false, 1);
    const r = await d.db.raw('select info from bench_dataset').catch(() => null);
    await d.close();
    const kept = (r?.rows[0]?.info as Kept | undefined) ?? null;
    // jsonb keeps its own key order: compare the shapes key by key
    const same = (a: object, b: object) => JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
    if (kept && same(kept.shape, shape)) {
      const s = await startBenchServer(0, undefined, {
        env,
        join: { databaseUrl: d.url, key: kept.key, organizationId: kept.organizationId },
      });
      info(`metrics-many: reusing ${shape.websites} websites kept in database ${keep} (BENCH_DATASET_DB)`);
      return { s, kept };
    }
  }
  const s = await startBenchServer(0, undefined, { env, ...(keep ? { keep } : {}) });
  try {
    const t0 = nowNs();
    const sites = await provisionSites(s, shape);
    info(
      `metrics-many: ${sites.length} websites with ${shape.competitors} competitors and ${shape.prompts} prompts provisioned in ${secondsSince(t0).toFixed(0)} s`,
    );
    const t1 = nowNs();
    const lastDay = Math.floor(Date.parse('2026-10-31T00:00:00Z') / DAY_MS);
    const total = await writeFacts(s.rt.database.db, sites, { answers: shape.answers, lastDay, seed: 23 }, (n) => {
      if (n % 500 === 0) info(`metrics-many: facts of ${n} websites written after ${secondsSince(t1).toFixed(0)} s`);
    });
    info(`metrics-many: ${total} answers' facts written straight into rm_fact_chunks in ${secondsSince(t1).toFixed(0)} s`);
    const kept: Kept = { key: s.key, organizationId: s.organizationId, shape, sites, lastDay };
    if (keep) {
      const db = s.rt.database.db;
      await db.raw('create table if not exists bench_dataset (info jsonb not null)');
      await db('bench_dataset').insert({ info: JSON.stringify(kept) });
    }
    return { s, kept };
  } catch (e) {
    await s.close();
    throw e;
  }
}

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  return v ? Number(v) : fallback;
};

export const metricsMany: Bench = {
  name: 'metrics-many',
  about:
    "a random website's cumulative metrics on a server of 2,000 websites x 5,000 answers (facts written straight into the read model) with a facts budget smaller than the whole",
  async run({ quick }) {
    // BENCH_MANY_SITES / BENCH_MANY_ANSWERS / BENCH_MANY_FACTS_MB shrink it while developing
    const shape: ManyShape = {
      websites: num('BENCH_MANY_SITES', quick ? 200 : 2000),
      answers: num('BENCH_MANY_ANSWERS', 5000),
      prompts: 5,
      competitors: 3,
    };
    const budgetMb = num('BENCH_MANY_FACTS_MB', quick ? 32 : 256);
    const { s, kept } = await manySites(shape, { FACTS_CACHE_MB: String(budgetMb) });
    try {
      const db = s.rt.database.db;
      const cache = factsCache(db);
      const r = seededRandom(5);
      const lengths = [7, 30, 90];
      const families = ['mention-rate', 'share-of-voice', 'citation-rate', 'position'];
      const request = async () => {
        const site = kept.sites[Math.floor(r() * kept.sites.length)];
        const len = lengths[Math.floor(r() * lengths.length)];
        const body = {
          website_id: site.websiteId,
          filters: { start_date: dayName(kept.lastDay - len + 1), end_date: dayName(kept.lastDay) },
        };
        const t0 = nowNs();
        const res = await fetch(`${s.url}/api/v1/metrics/${families[Math.floor(r() * families.length)]}/cumulative`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': s.key },
          body: JSON.stringify(body),
        });
        const out = (await res.json()) as { responses?: number };
        if (res.status !== 200) throw new Error(`metrics-many: ${res.status} ${JSON.stringify(out)}`);
        if (!out.responses) throw new Error(`metrics-many: no answers selected for ${site.websiteId} over ${len} days`);
        return Number(nowNs() - t0) / 1e6;
      };
      // fill the budget: random websites, 4 at a time, until the facts held reach it and websites are being dropped
      const tw = nowNs();
      let warm = 0;
      while (cache.stats().evictions < shape.websites / 20 && warm < shape.websites * 4) {
        await Promise.all(Array.from({ length: 4 }, request));
        warm += 4;
      }
      info(`metrics-many: ${warm} warm-up requests in ${secondsSince(tw).toFixed(0)} s; ${JSON.stringify(cache.stats())}`);
      const before = cache.stats();
      const n = quick ? 300 : 2000;
      const times: number[] = [];
      const cpu = await cpuMeter(db);
      for (let i = 0; i < n; i++) times.push(await request());
      const used = await cpu.stop();
      const after = cache.stats();
      times.sort((a, b) => a - b);
      const whole = (after.held_bytes / Math.max(1, after.websites_held)) * shape.websites;
      const misses = after.loads - before.loads;
      report('metrics_many_cumulative_ms_p95', quantile(times, 0.95), 'ms', {
        goal: { op: '<=', value: 40 },
        note: `${n} requests one after another, a random website of ${shape.websites} (${shape.answers} answers each, ${shape.websites * shape.answers} in all) and a random range of 7, 30 or 90 days ending on its last day; p50 ${quantile(times, 0.5).toFixed(1)} ms, p99 ${quantile(times, 0.99).toFixed(1)} ms; ${misses} loads (${((100 * misses) / n).toFixed(0)}% of requests) and ${after.evictions - before.evictions} evictions meanwhile; CPU ${((used.nodeUs + used.pgUs) / n / 1000).toFixed(2)} ms per request (node + Postgres)`,
      });
      report('metrics_many_facts_held_mb', after.held_bytes / 2 ** 20, 'MB', {
        goal: { op: '<=', value: budgetMb },
        note: `FACTS_CACHE_MB=${budgetMb}; ${after.websites_held} websites held of ${shape.websites}; all their facts would take about ${(whole / 2 ** 20).toFixed(0)} MB; ${after.evictions} evictions since the start`,
      });
      report('metrics_many_server_rss_mb', process.memoryUsage().rss / 2 ** 20, 'MB', {
        note: 'RSS of the bench process, which is the server (in process) plus the request loop; the websites were written by an earlier run or before the server served',
      });
    } finally {
      await s.close();
    }
  },
};
