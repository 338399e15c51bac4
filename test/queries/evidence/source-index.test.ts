import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVIDENCE_SQL } from '../../../projections/answers/evidence';
import { dayNumber, sortedKeys, sourceCounts } from '../../../queries/evidence/source-index';
import type { TestDatabase } from '../../support/db';
import { sharedStore } from '../../support/per-worker';

/** The sources read's in-memory sums against the same sums grouped by Postgres, for ranges, models and deep pages. */
let t: TestDatabase;
beforeAll(async () => {
  t = await sharedStore();
  await t.db.raw(`${EVIDENCE_SQL}
    create table if not exists rm_fact_sites (website_id uuid primary key, version bigint not null, generation bigint not null, entities jsonb not null, rederived bigint not null default 0);`);
});
afterAll(() => t?.close());

const MODELS = ['gpt-4o', 'claude', 'gemini'];
const KEYS = ['a.com', 'b.com', 'B.com', 'z.org/x', 'a.com/é', 'a.com/z', 'm.net', 'q.io/1', 'q.io/2', 'w.dev'];

function rng(seed: number) {
  let s = seed;
  return (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
}

async function expected(websiteId: string, from: string | null, to: string | null, models: string[] | null) {
  const q = t
    .db('rm_source_days')
    .where({ website_id: websiteId, kind: 1 })
    .groupBy('key')
    .select('key', t.db.raw('sum(retrieved)::int as retrieved'), t.db.raw('sum(cited)::int as cited'))
    .orderByRaw('sum(cited) desc, sum(retrieved) desc, key collate "C"');
  if (from) q.where('day', '>=', from);
  if (to) q.where('day', '<=', to);
  if (models) q.whereIn('model', models);
  return q;
}

describe('sources: the in-memory sums', () => {
  it('given random day rows, when read over ranges, models and pages, then every page is the grouped sums in their order', async () => {
    const w = randomUUID();
    const r = rng(7);
    const keys = [...KEYS, ...Array.from({ length: 600 }, (_, i) => `site${r(900)}.com/p${i % 37}`)];
    const rows = new Map<string, { website_id: string; kind: number; day: string; model: string; key: string; retrieved: number; cited: number }>();
    for (let i = 0; i < 3000; i++) {
      const day = new Date(Date.UTC(2026, 0, 1 + r(60))).toISOString().slice(0, 10);
      const model = MODELS[r(3)];
      const key = keys[r(keys.length)];
      const retrieved = 1 + r(4);
      rows.set(`${day}|${model}|${key}`, { website_id: w, kind: 1, day, model, key, retrieved, cited: r(retrieved + 1) });
    }
    const all = [...rows.values()];
    await t.db.batchInsert('rm_source_days', all, 1000);
    await t.db('rm_fact_sites').insert({ website_id: w, version: 1, generation: 0, entities: '[]' });
    const cases: [string | null, string | null, string[] | null][] = [
      [null, null, null],
      ['2026-01-10', '2026-02-05', null],
      ['2026-01-20', null, ['claude']],
      [null, '2026-01-03', ['gpt-4o', 'gemini']],
      ['2026-03-05', null, null],
    ];
    for (const [from, to, models] of cases) {
      const exp = await expected(w, from, to, models);
      for (const [offset, count] of [
        [0, 1],
        [0, 11],
        [0, 101],
        [3, 1000],
        [37, 20],
        [100, 101],
        [exp.length - 5, 10],
      ]) {
        const got = await sourceCounts(
          t.db,
          w,
          1,
          { fromDay: from ? dayNumber(from) : null, toDay: to ? dayNumber(to) : null, models },
          Math.max(0, offset),
          count,
        );
        expect(got, `${from} ${to} ${models} ${offset}`).toEqual(exp.slice(Math.max(0, offset), Math.max(0, offset) + count));
      }
    }
    // a write moves the website's version: the next read sums it
    await t.db('rm_source_days').insert({ website_id: w, kind: 1, day: '2026-01-02', model: 'new', key: 'new.com', retrieved: 999, cited: 999 });
    await t.db('rm_fact_sites').where('website_id', w).update({ version: 2 });
    const top = await sourceCounts(t.db, w, 1, { fromDay: null, toDay: null, models: null }, 0, 1);
    expect(top).toEqual([{ key: 'new.com', retrieved: 999, cited: 999 }]);
  });
});

describe('sources: keys in order of their sums', () => {
  it('given random sums, small and past 53 bits packed, when sorted, then by cited, retrieved, then the key', () => {
    const r = rng(11);
    for (const [ranks, big] of [
      [5000, 1],
      [5000, 2 ** 20],
      [40, 1],
    ]) {
      const retrieved = new Int32Array(ranks);
      const cited = new Int32Array(ranks);
      const met: number[] = [];
      for (let k = 0; k < ranks; k++) {
        if (r(3) === 0) continue;
        retrieved[k] = 1 + r(30) * big;
        cited[k] = r(4) === 0 ? 0 : Math.min(retrieved[k], r(20) * big);
        met.push(k);
      }
      const sorted = [...met].sort((a, b) => cited[b] - cited[a] || retrieved[b] - retrieved[a] || a - b);
      expect(Array.from(sortedKeys(retrieved, cited, Int32Array.from([...met].reverse()))), `${ranks} ${big}`).toEqual(sorted);
    }
  });
});
