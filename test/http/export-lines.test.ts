import { describe, expect, it } from 'vitest';
import { exportAnswers, exportNdjson, planExport, START } from '../../queries/evidence/export';
import { buildSite, everyListedAnswer, importAnswers, type Site } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';
import { until } from '../support/until';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

/** A seeded generator (mulberry32): the same answers on every run. */
function random(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const some = <T>(n: number, f: () => T) => Array.from({ length: int(n + 1) }, f);
  return { int, pick, some, chance: (p: number) => next() < p };
}

const NAMES = ['Acme', 'Globex', 'Initech', 'Hooli', 'Umbrella'];
const WORDS = ['best', 'CRM', 'é', '"quoted"', 'back\\slash', 'tab\there', 'line\nbreak', '😀', '**bold**', '1.', '<tag>', 'ü'];
const HOSTS = ['acme-xl.example.com', 'www.globex-xl.example.net', 'g2.com', 'reddit.com', 'initech-xl.example.org'];

/** Random import items: texts naming the brand and competitors in any order, URLs cited, read and in the text, queries, product cards. */
function answers(promptIds: string[], n: number, seed: number) {
  const r = random(seed);
  const url = () => `https://${r.pick(HOSTS)}/${r.pick(['', 'a', 'b/c', 'x?utm_source=y', 'p#h'])}`;
  return Array.from({ length: n }, (_, i) => ({
    prompt_id: r.pick(promptIds),
    model: r.pick(['chatgpt', 'perplexity', 'gemini', 'claude']),
    run_at: new Date(Date.UTC(2026, 9, 1 + r.int(30), r.int(24), r.int(60), r.int(60), r.int(1000))).toISOString(),
    text: `${r.some(12, () => (r.chance(0.3) ? r.pick(NAMES) : r.chance(0.2) ? url() : r.pick(WORDS))).join(r.pick([' ', ', ', '\n- ']))} end.`,
    ...(r.chance(0.7) && { citations: r.some(4, url) }),
    ...(r.chance(0.6) && { retrieved: r.some(5, url) }),
    ...(r.chance(0.6) && { search_queries: r.some(3, () => `${r.pick(WORDS)} ${r.pick(NAMES)}  `) }),
    ...(r.chance(0.3) && {
      products: r.some(2, () => ({
        name: `${r.pick(NAMES)} One`,
        brand: r.pick(NAMES),
        price: r.int(10000) / 100,
        currency: 'USD',
        position: 1 + r.int(5),
      })),
    }),
    ...(r.chance(0.3) && { external_id: `ext-${seed}-${i}` }),
  }));
}

/** The export over HTTP (NDJSON, one call), its records and cursor. */
async function exported(websiteId: string, after?: string) {
  const u = new URL('/api/v1/responses/export', s.url);
  u.searchParams.set('website_id', websiteId);
  if (after) u.searchParams.set('after', after);
  const r = await fetch(u, { headers: { 'x-api-key': w.a.key } });
  const text = await r.text();
  expect(r.status, text).toBe(200);
  expect(text.endsWith('\n') || text === '').toBe(true);
  return {
    records: text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    next: r.headers.get('x-next-cursor')!,
  };
}

const byId = <T extends { id: string }>(xs: T[]) => new Map(xs.map((x) => [x.id, x]));

/** Then: the ready lines (COPY over HTTP, and PGlite's paged read) parse equal to the answers shaped when read. */
async function expectSameAsReshaped(site: Site, records: { id: string }[]) {
  const db = s.rt.database.db;
  const plan = await planExport(db, site.id, START, 100_000);
  const reshaped: { id: string }[] = [];
  for await (const a of exportAnswers(db, site.id, plan)) reshaped.push(a);
  let paged = '';
  for await (const lines of exportNdjson(db, site.id, plan)) paged += lines;
  expect(records.map((r) => r.id)).toEqual(reshaped.map((r) => r.id));
  expect(records).toEqual(reshaped);
  expect(
    paged
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
  ).toEqual(reshaped);
  expect(byId(records)).toEqual(byId(await everyListedAnswer<{ id: string }>(s, w.a.key, site.id)));
}

describe('the export lines kept ready', () => {
  it('given random answers, when exported and after each competitor or prompt change, then every line parses equal to the answer shaped when read', async () => {
    const site = await buildSite(s, w.a.key, {
      name: 'Acme',
      url: 'https://acme-xl.example.com',
      competitors: [
        { name: 'Globex', url: 'https://www.globex-xl.example.net' },
        { name: 'Hooli', url: 'https://hooli-xl.example.io' },
      ],
      prompts: [{ text: 'Best CRM?' }, { text: 'Cheapest "CRM"?' }],
    });
    const promptIds = site.prompts.map((p) => p.id);
    await importAnswers(s, w.a.key, site.id, answers(promptIds, 60, 1));
    await importAnswers(s, w.a.key, site.id, answers(promptIds, 40, 2));
    let synced = await exported(site.id);
    expect(synced.records).toHaveLength(100);
    await expectSameAsReshaped(site, synced.records);

    const [globex, hooli] = site.competitors;
    const changes: [string, string, object][] = [
      ['PATCH', `/api/v1/competitors/${globex.id}`, { website_id: site.id, name: 'Globex Corp' }],
      ['PATCH', `/api/v1/competitors/${hooli.id}`, { website_id: site.id, identifiers: ['Initech'] }],
      ['POST', '/api/v1/competitors', { website_id: site.id, name: 'Umbrella', url: 'https://umbrella-xl.example.org' }],
      ['DELETE', `/api/v1/competitors/${globex.id}`, {}],
    ];
    for (const [method, path, body] of changes) {
      const r =
        method === 'DELETE'
          ? await call(s, 'DELETE', path, { key: w.a.key, query: { website_id: site.id } })
          : await call(s, method as 'POST', path, { key: w.a.key, body });
      expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      // the history re-derived: every answer comes again
      const again = await until(`${method} ${path} re-derived`, async () => {
        const e = await exported(site.id, synced.next);
        return e.records.length === 100 && e;
      });
      await expectSameAsReshaped(site, again.records);
      synced = again;
    }
    const names = new Set(synced.records.flatMap((r: { competitors: { name: string }[] }) => r.competitors.map((c) => c.name)));
    expect(names.has('Globex Corp')).toBe(false);
    expect(names.has('Umbrella')).toBe(true);

    // a prompt's new text is the lines' at once
    const renamed = await call(s, 'PATCH', `/api/v1/prompts/${promptIds[0]}`, {
      key: w.a.key,
      body: { website_id: site.id, text: 'Best CRM in 2026?' },
    });
    expect(renamed.status).toBe(200);
    const now = await exported(site.id);
    expect(now.records.filter((r: { prompt: string }) => r.prompt === 'Best CRM in 2026?').length).toBeGreaterThan(0);
    await expectSameAsReshaped(site, now.records);
  }, 120_000);
});
