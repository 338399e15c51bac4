import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answersProjection } from '../../projections/answers';
import { PART_ROWS } from '../../projections/answers/writers';
import { encodeFacts, FactChunkBuilder } from '../../src/analysis/facts';
import { seededRandom } from '../../src/domain/random';
import { FactsCache } from '../../queries/metrics/facts/cache';
import { dayName, type SiteFacts } from '../../queries/metrics/facts/layout';
import { freshDatabase, type TestDatabase } from '../support/db';
import { until } from '../support/until';

const LAST_DAY = 20_400;
const BIG_DAYS = 90;
const BIG = '00000000-0000-4000-8000-000000000001';
const SMALL = '00000000-0000-4000-8000-000000000002';
const MID = '00000000-0000-4000-8000-000000000003';

let d: TestDatabase;

/** A website with `days` days of `perDay` answers ending on LAST_DAY, written as the answers projection stores them. */
async function site(websiteId: string, days: number, perDay: number, seed: number) {
  const db = d.db;
  const competitor = `${websiteId.slice(0, -4)}ffff`;
  await db('rm_analysis_entities').insert([
    { website_id: websiteId, entity_id: websiteId, slot: 0, is_self: true, name: 'Brand', identifiers: [], url: null },
    { website_id: websiteId, entity_id: competitor, slot: 1, is_self: false, name: 'Rival', identifiers: [], url: null },
  ]);
  const entities = [websiteId, competitor];
  await db('rm_fact_sites').insert({ website_id: websiteId, version: 1, generation: 0, entities: JSON.stringify(entities) });
  const r = seededRandom(seed);
  for (let day = LAST_DAY - days + 1; day <= LAST_DAY; day++) {
    const rows = [];
    for (let part = 0; part * PART_ROWS < perDay; part++) {
      const b = new FactChunkBuilder(entities);
      for (let i = part * PART_ROWS; i < Math.min(perDay, (part + 1) * PART_ROWS); i++)
        b.add({
          t: Math.floor(r() * 86_400_000),
          prompt_id: `p${i % 50}`,
          location_id: null,
          schedule_id: null,
          model: `m${i % 7}`,
          mentions: r() < 0.5 ? [[0, 1]] : [[1, 1]],
          cited: r() < 0.2 ? [0] : [],
        });
      const { meta, data } = encodeFacts(b.build());
      rows.push({
        website_id: websiteId,
        day: dayName(day),
        part,
        version: 1,
        n: meta.n,
        schedule_keys: ['default'],
        meta: JSON.stringify(meta),
        data,
      });
    }
    await db('rm_fact_chunks').insert(rows);
  }
}

const answersOf = (s: SiteFacts, from = Number.NEGATIVE_INFINITY, to = Number.POSITIVE_INFINITY) =>
  s.order.filter((p) => p.day >= from && p.day <= to).reduce((n, p) => n + p.n, 0);

beforeAll(async () => {
  d = await freshDatabase();
  await answersProjection.migrate(d.db);
  await site(BIG, BIG_DAYS, 4 * PART_ROWS, 1);
  await site(SMALL, 3, 40, 2);
  await site(MID, 20, 200, 3);
}, 120_000);
afterAll(async () => d?.close());

describe('metric facts: loading', () => {
  it('given a cold load of a large website, when a small website is read as its first facts arrive, then the small one is answered before the large load ends', async () => {
    const cache = new FactsCache();
    const order: string[] = [];
    let small = null as Promise<SiteFacts> | null;
    // the small website is asked for the moment the large one's first parts come back from Postgres: a load that
    // decoded them without giving the event loop back would end before the small read got its answers
    const onResponse = (_r: unknown, q: { sql?: string; bindings?: unknown[] }) => {
      // (a SELECT of the chunks with the website as a binding, or the COPY that reads them with the website written in)
      if (small || !/"data"|, data from/.test(q.sql ?? '') || !(q.bindings?.includes(BIG) || q.sql?.includes(BIG))) return;
      small = cache.get(d.db, SMALL).then((s) => {
        order.push('small');
        return s;
      });
    };
    d.db.on('query-response', onResponse);
    try {
      const b = await cache.get(d.db, BIG);
      order.push('big');
      const s = await small;
      if (!s) throw new Error('the small website was never asked for');
      expect(order).toEqual(['small', 'big']);
      expect(answersOf(b)).toBe(BIG_DAYS * 4 * PART_ROWS);
      expect(answersOf(s)).toBe(3 * 40);
    } finally {
      d.db.removeListener('query-response', onResponse);
    }
  });

  it('given a request for the last 7 days of a cold website, then it loads those days first and the others follow in the background, counted as a whole load counts them', async () => {
    const cache = new FactsCache();
    const first = await cache.get(d.db, MID, { first: LAST_DAY - 6, last: LAST_DAY });
    expect(first.from).toBe(LAST_DAY - 6);
    expect(answersOf(first)).toBe(7 * 200);
    await until('the other days loaded in the background', async () => first.from === LAST_DAY - 19, 30_000);
    const whole = await new FactsCache().get(d.db, MID);
    expect(answersOf(first)).toBe(answersOf(whole));
    expect(answersOf(first)).toBe(20 * 200);
    // the same object keeps serving: every day is held now
    expect(await cache.get(d.db, MID, { first: LAST_DAY - 19, last: LAST_DAY - 10 })).toBe(first);
    expect(cache.stats().loads).toBe(1);
  });

  it('given a read without fill (an alert evaluation), then only its days are loaded and held; a later read of other days fills as usual', async () => {
    const cache = new FactsCache();
    const week = await cache.get(d.db, MID, { first: LAST_DAY - 6, last: LAST_DAY }, undefined, { fill: false });
    expect(answersOf(week)).toBe(7 * 200);
    expect(cache.fillingInBackground).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(week.from).toBe(LAST_DAY - 6);
    expect(answersOf(week)).toBe(7 * 200);
    // held: the same days again are served as they are, without a load
    expect(await cache.get(d.db, MID, { first: LAST_DAY - 6, last: LAST_DAY }, undefined, { fill: false })).toBe(week);
    expect(cache.stats().loads).toBe(1);
    // a metrics read of an older day extends what is held and goes on to the rest in the background
    const more = await cache.get(d.db, MID, { first: LAST_DAY - 9, last: LAST_DAY });
    expect(more).toBe(week);
    await until('the other days loaded in the background', async () => week.from === LAST_DAY - 19, 30_000);
    expect(answersOf(week)).toBe(20 * 200);
  });

  it('given a budget that holds seven weeks of a large website, when its last week is read, then the background reads older days only while they fit: the budget holds', async () => {
    const week = (await new FactsCache().get(d.db, BIG, { first: LAST_DAY - 6, last: LAST_DAY })).bytes;
    const cache = new FactsCache(Math.floor(week * 7));
    await cache.get(d.db, SMALL);
    const big = await cache.get(d.db, BIG, { first: LAST_DAY - 6, last: LAST_DAY });
    await until('the background reads to stop', async () => cache.fillingInBackground === 0, 30_000);
    const stats = cache.stats();
    expect(stats.held_bytes).toBeLessThanOrEqual(stats.budget_bytes);
    // more than the week asked for, not all 90 days, and the small website was not pushed out for it
    expect(big.from).toBeLessThan(LAST_DAY - 6);
    expect(big.from).toBeGreaterThan(LAST_DAY - BIG_DAYS + 1);
    expect(stats.websites_held).toBe(2);
    expect(stats.evictions).toBe(0);
  });

  it('given a budget below two websites, when three are read, then the least recently used are dropped and counted as evictions', async () => {
    const probe = new FactsCache();
    const mid = (await probe.get(d.db, MID)).bytes;
    const cache = new FactsCache(Math.floor(mid * 1.5));
    await cache.get(d.db, SMALL);
    await cache.get(d.db, MID);
    await cache.get(d.db, BIG, { first: LAST_DAY, last: LAST_DAY });
    const stats = cache.stats();
    expect(stats.evictions).toBeGreaterThanOrEqual(1);
    expect(stats.held_bytes).toBeLessThanOrEqual(stats.budget_bytes);
    expect(stats.budget_bytes).toBe(Math.floor(mid * 1.5));
  });
});
