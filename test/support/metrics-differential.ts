import { appendFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  differences,
  expectedConnectorRows,
  expectedContent,
  expectedContentPrompts,
  expectedComparison,
  expectedCumulative,
  expectedStability,
  type CompareMetricRef,
  expectedListing,
  expectedObservations,
  expectedShopping,
  expectedSources,
  expectedTimeSeries,
  FAMILIES,
  type RefAnswer,
  type RefEntity,
  type RefFilters,
  type RefCard,
  type RefPrompt,
  type RefShoppingFilters,
} from './metrics-reference';
import { SHOPPING_MODEL_IDS } from '../../src/domain/models';
import { normalizeUrl } from '../../src/domain/urls';
import { onRealPostgres } from './db';
import { recordedFields } from '../../projections/answers/export-line';
import { blockCounts, DEFAULT_BLOCK_LEVELS, setBlockLevels } from '../../queries/metrics/blocks';
import { finishedRun } from './answers';
import { call, caughtUp, startServer, type TestServer } from './server';

/**
 * Differential test of the metric endpoints: random histories of a website (created or provisioned, competitors
 * added, renamed and removed, prompts created, paused and deleted, answers imported over several days, models,
 * locations and schedules), then every metric endpoint's answer against an independent reference
 * (test/support/metrics-reference.ts) computed from the imported items and the catalogue as this test built it.
 *
 * `npm test` runs DIFF_RUNS cases (default 150) from a fixed seed; `npm run test:long` runs 2,000 from a random seed
 * (DIFF_SEED replays one) and prints metrics_differential_cases_per_s. The runs are split in two halves, one per test
 * file (test/properties/metrics-differential-{1,2}.test.ts), so that the two cores run them side by side: the second
 * half is the same seed's runs from the first half's end on (fast-check's `path`), so together they are the one run
 * (with a random seed, in the long run, each half draws and prints its own).
 */

const RUNS = Number(process.env.DIFF_RUNS ?? 150);
const SEED = process.env.DIFF_SEED !== undefined ? Number(process.env.DIFF_SEED) : process.env.DIFF_RUNS ? Date.now() % 2 ** 31 : 20261125;

/** Single words, none a word of another or of a domain. */
const NAMES = ['Zentro', 'Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Vandelay', 'Stark', 'Wonka', 'Tyrell', 'Soylent', 'Gringotts'];
const ALIASES = ['ZenCo', 'AcmeCorp', 'GBX', 'Inty', 'UmbrellaHQ', 'HooliX'];
const FILLER = ['best', 'tools', 'for', 'small', 'teams', 'is', 'a', 'solid', 'choice', 'pricing', 'compared', 'with', 'support', 'the', 'ville'];
/** the first and last are the shopping endpoint's two models (SHOPPING_MODEL_IDS) */
const MODELS = ['chatgpt', 'claude', 'gemini', 'perplexity', 'google-ai-mode'];
const DAY0 = Date.parse('2026-03-01T00:00:00Z');
const DAYS = 6;
/** product cards: merchants (two spellings of one), currencies (any case), product-name words */
const MERCHANTS = ['Amazon', 'Best Buy', 'best  buy', 'Walmart'];
const CURRENCIES = ['USD', 'EUR', 'usd'];
const LINES = ['Pro', 'Mini', 'Max'];
/** target_identifiers a shopping request may send */
const TARGETS = [['Pro'], ['mini', 'Max 2'], ['Nothing']];
const SEPARATORS = [' ', ', ', '. ', ' and ', '\n', ' - ', '; ', ': '];

// ---- what fast-check draws: plain numbers, resolved against the site's state when the history runs ----

const token = fc.oneof(
  { weight: 5, arbitrary: fc.record({ k: fc.constant('name' as const), i: fc.nat(NAMES.length - 1), v: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('near' as const), i: fc.nat(NAMES.length - 1), v: fc.nat(4) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('alias' as const), i: fc.nat(ALIASES.length - 1), v: fc.nat(1) }) },
  { weight: 2, arbitrary: fc.record({ k: fc.constant('domain' as const), i: fc.nat(7), v: fc.nat(6) }) },
  { weight: 4, arbitrary: fc.record({ k: fc.constant('filler' as const), i: fc.nat(FILLER.length - 1), v: fc.constant(0) }) },
);
type Token = { k: 'name' | 'near' | 'alias' | 'domain' | 'filler'; i: number; v: number };

const item = fc.record({
  tokens: fc.array(fc.tuple(token, fc.nat(SEPARATORS.length - 1)), { minLength: 1, maxLength: 8 }),
  citations: fc.array(fc.record({ i: fc.nat(7), v: fc.nat(5) }), { maxLength: 3 }),
  retrieved: fc.array(fc.record({ i: fc.nat(7), v: fc.nat(5) }), { maxLength: 3 }),
  prompt: fc.nat(9),
  model: fc.nat(MODELS.length - 1),
  day: fc.nat(DAYS - 1),
  minute: fc.nat(24 * 60 - 1),
  location: fc.nat(3), // 0: none
  scheduled: fc.nat(4), // 0: the custom schedule (when there is one)
  // product cards: brand 0..NAMES-1 a name, then an alias, then an untracked brand, then none (the name decides)
  products: fc.array(
    fc.record({
      brand: fc.nat(NAMES.length + ALIASES.length + 1),
      named: fc.nat(NAMES.length), // the name's first word when there is no brand: a NAME, or (NAMES.length) a plain word
      line: fc.nat(LINES.length - 1),
      n: fc.nat(3),
      merchant: fc.nat(MERCHANTS.length), // MERCHANTS.length: none
      price: fc.option(fc.nat(80), { nil: null, freq: 4 }),
      currency: fc.nat(CURRENCIES.length), // CURRENCIES.length: none
      position: fc.integer({ min: 1, max: 12 }),
    }),
    { maxLength: 4 },
  ),
  observations: fc.array(
    fc.record({ entity: fc.nat(9), attribute: fc.nat(1), positive: fc.boolean(), score: fc.option(fc.integer({ min: 1, max: 10 }), { nil: null }) }),
    { maxLength: 2 },
  ),
});
type Item = typeof item extends fc.Arbitrary<infer T> ? T : never;

const competitorSpec = fc.record({ name: fc.nat(NAMES.length - 1), alias: fc.option(fc.nat(ALIASES.length - 1), { nil: null }), below: fc.nat(9) });
type CompetitorSpec = typeof competitorSpec extends fc.Arbitrary<infer T> ? T : never;

const step = fc.oneof(
  { weight: 4, arbitrary: fc.record({ t: fc.constant('import' as const), items: fc.array(item, { minLength: 1, maxLength: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('add' as const), c: competitorSpec }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('rename' as const), which: fc.nat(9), name: fc.nat(NAMES.length - 1) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('remove' as const), which: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('prompt' as const), branded: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('status' as const), which: fc.nat(9), paused: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('delete-prompt' as const), which: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('topic' as const), branded: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('delete-topic' as const), which: fc.nat(9), prompts: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('restore-topic' as const), which: fc.nat(9) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('run' as const), custom: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({ t: fc.constant('identifiers' as const), which: fc.nat(9), alias: fc.option(fc.nat(ALIASES.length - 1), { nil: null }) }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('pause' as const) }) },
);
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

const filterSpec = fc.record(
  {
    models: fc.subarray([0, 1, 2, 3, 4], { minLength: 1 }),
    prompt: fc.nat(9),
    prompt_status: fc.constantFrom('active' as const, 'paused' as const),
    prompt_type: fc.constantFrom('branded' as const, 'non_branded' as const),
    location: fc.nat(2),
    days: fc.tuple(fc.nat(DAYS - 1), fc.nat(DAYS - 1), fc.boolean()),
    competitors: fc.array(fc.nat(9), { minLength: 1, maxLength: 3 }),
    schedule: fc.constantFrom('custom', 'default', 'manual'),
    targets: fc.nat(TARGETS.length - 1),
  },
  { requiredKeys: [] },
);
type FilterSpec = typeof filterSpec extends fc.Arbitrary<infer T> ? T : never;
/** A request's filters, and optionally a saved view (its own filters) the request names */
const query = fc.record({ request: filterSpec, view: fc.option(filterSpec, { nil: null, freq: 3 }) });
type Query = typeof query extends fc.Arbitrary<infer T> ? T : never;

const history = fc.record({
  provision: process.env.DIFF_CREATE_ONLY ? fc.constant(false) : fc.boolean(),
  brand: fc.nat(NAMES.length - 1),
  competitors: fc.array(competitorSpec, { maxLength: 3 }),
  prompts: fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
  locations: fc.nat(2),
  schedule: fc.boolean(),
  /** the custom schedule's samples_per_prompt: its runs ask each unit that many times */
  samples: fc.integer({ min: 1, max: 3 }),
  steps: fc.array(step, { minLength: 1, maxLength: 6 }),
  filters: fc.array(query, { maxLength: 1 }),
});
type History = typeof history extends fc.Arbitrary<infer T> ? T : never;

// ---- the site as this test built it: the reference's input ----

interface Competitor extends RefEntity {
  slot: number;
}

class Model {
  brand!: RefEntity;
  competitors: Competitor[] = [];
  prompts: (RefPrompt & { answered: boolean; hard: boolean; topic: string | null })[] = [];
  locations: { id: string; name: string }[] = [];
  topics: { id: string; name: string; deleted: boolean; took: string[] }[] = [];
  attributes: { id: string; name: string }[] = [];
  schedule: string | null = null;
  samples = 1;
  answers: RefAnswer[] = [];
  nextSlot = 1;
  constructor(readonly tag: string) {}

  domain(slot: number) {
    return `d${slot}${this.tag}.example.org`;
  }
  entities(): RefEntity[] {
    return [this.brand, ...this.competitors];
  }
  nameTaken(name: string) {
    return this.entities().some((e) => e.name.toLowerCase() === name.toLowerCase());
  }
  /** prompts an import may name (hard-deleted ones are gone) */
  importable() {
    return this.prompts.filter((p) => !p.hard);
  }
}

const pick = <T>(xs: T[], i: number): T | undefined => (xs.length ? xs[i % xs.length] : undefined);

function word(m: Model, t: Token): string {
  switch (t.k) {
    case 'name': {
      const n = NAMES[t.i];
      return [n, n.toLowerCase(), n.toUpperCase(), `${n}'s`, `${n}-powered`][t.v];
    }
    case 'near': {
      const n = NAMES[t.i];
      return [`${n}ville`, `pre${n}`, `${n}_x`, `é${n}`, `${n}2`][t.v];
    }
    case 'alias':
      return t.v ? ALIASES[t.i].toLowerCase() : ALIASES[t.i];
    case 'domain': {
      const d = m.domain(t.i);
      return [d, `www.${d}`, `blog.${d}`, `https://${d}/page`, `${d}.evil.net`, `x${d}`, `${d}.`][t.v];
    }
    case 'filler':
      return FILLER[t.i];
  }
}

function citation(m: Model, c: { i: number; v: number }): string {
  const d = m.domain(c.i);
  return [
    `https://${d}/p`,
    `https://blog.${d}/post?utm_source=x`,
    `http://www.${d}`,
    `https://${d}.evil.net/`,
    'https://news.example.net/review',
    `https://WWW.${d.toUpperCase()}/Caps`,
  ][c.v];
}

function textOf(m: Model, tokens: [Token, number][]): string {
  let s = '';
  tokens.forEach(([t, sep], k) => {
    const w = word(m, t);
    // URLs stand between spaces (the reference's URL finder is that simple)
    const isUrl = w.startsWith('http') || w.startsWith('www.');
    if (k > 0) s += isUrl ? ' ' : SEPARATORS[sep];
    s += w;
    if (isUrl && k < tokens.length - 1) s += ' ';
  });
  return s;
}

function filtersOf(m: Model, f: FilterSpec): { body: Record<string, unknown>; ref: RefFilters } {
  const body: Record<string, unknown> = {};
  const ref: RefFilters = {};
  if (f.models) {
    body.models = f.models.map((i) => MODELS[i]);
    ref.models = body.models as string[];
  }
  if (f.prompt !== undefined) {
    const p = pick(m.importable(), f.prompt);
    if (p) ref.prompt_ids = body.prompt_ids = [p.id];
  }
  if (f.prompt_status) ref.prompt_status = body.prompt_status = f.prompt_status;
  if (f.prompt_type) ref.prompt_type = body.prompt_type = f.prompt_type;
  if (f.location !== undefined) {
    const l = pick(m.locations, f.location);
    if (l) ref.location_ids = body.location_ids = [l.id];
  }
  if (f.days) {
    const [a, b, plain] = f.days;
    const [from, to] = [Math.min(a, b), Math.max(a, b)];
    const day = (d: number) => new Date(DAY0 + d * 86_400_000).toISOString().slice(0, 10);
    if (plain) {
      body.start_date = day(from);
      body.end_date = day(to);
      ref.start = DAY0 + from * 86_400_000;
      ref.end = DAY0 + (to + 1) * 86_400_000 - 1;
    } else {
      ref.start = DAY0 + from * 86_400_000 + 6 * 3_600_000;
      ref.end = DAY0 + to * 86_400_000 + 18 * 3_600_000;
      body.start_date = new Date(ref.start).toISOString();
      body.end_date = new Date(ref.end).toISOString();
    }
  }
  if (f.competitors) {
    const ids = [...new Set(f.competitors.map((i) => pick(m.competitors, i)?.id).filter((x): x is string => !!x))];
    if (ids.length) ref.competitor_ids = body.competitor_ids = ids;
  }
  // only the shopping endpoint reads these
  if (f.targets !== undefined) ref.target_identifiers = TARGETS[f.targets];
  if (f.schedule === 'custom' && m.schedule) ref.schedule_id = body.schedule_id = m.schedule;
  if (f.schedule === 'default' || f.schedule === 'manual') {
    body.schedule_id = f.schedule;
    ref.schedule_id = null;
  }
  return { body, ref };
}

/**
 * A query's filters; with a saved view: the view is saved with its own filters, the request names it, and what the
 * request sends replaces the view's value field by field (dates included); a view counts active prompts unless it
 * or the request says otherwise (spec, Saved views).
 */
async function queryOf(key: string, websiteId: string, m: Model, q: Query) {
  const request = filtersOf(m, q.request);
  if (!q.view) return request;
  const view = filtersOf(m, q.view);
  const r = await ok('POST', '/api/v1/saved-views', key, {
    website_id: websiteId,
    name: `View ${Math.random().toString(36).slice(2)}`,
    filters: view.body,
  });
  const ref: RefFilters = { ...view.ref, ...request.ref };
  ref.prompt_status ??= 'active';
  return { body: { ...request.body, saved_view_id: r.body.view.id }, ref };
}

// ---- running a history against the server ----

let s: TestServer;
let key: string;
let cases = 0;

async function ok(
  method: string,
  path: string,
  key: string,
  body?: unknown,
  status = [200, 201],
  query?: Record<string, string>,
  via: TestServer = s,
) {
  const t0 = performance.now();
  const r = await call(via, method, path, { key, body, query });
  if (process.env.DIFF_TRACE) console.log(`${(performance.now() - t0).toFixed(1)} ms ${method} ${path} ${r.status}`);
  if (!status.includes(r.status)) throw new Error(`${method} ${path} ${JSON.stringify(body ?? query)} -> ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

/** Every page of a paged listing (page_num from 0, at most 52 pages), the items under `field` of each page in order. */
async function allPages(via: TestServer, path: string, key: string, body: Record<string, unknown>, field: string) {
  const items: Record<string, unknown>[] = [];
  for (let page = 0; ; page++) {
    const r = await ok('POST', path, key, { ...body, page_num: page, page_size: 100 }, [200], undefined, via);
    items.push(...r.body[field]);
    if (!r.body.has_more || page > 50) break;
  }
  return items;
}

async function build(h: History, key: string, m: Model): Promise<string> {
  const brandName = NAMES[h.brand];
  const url = `https://${m.domain(0)}`;
  const competitors = h.competitors
    .map((c) => ({ c, name: NAMES[c.name] }))
    .filter(({ name }, i, all) => name !== brandName && all.findIndex((x) => x.name === name) === i);
  const compBody = (c: CompetitorSpec, name: string, slot: number) => ({
    name,
    // one in ten: a page of the website itself (provision ignores it; an add is refused)
    url: c.below === 0 ? `${url}/compare/${slot}` : `https://${c.below === 1 ? 'www.' : ''}${m.domain(slot)}${c.below === 2 ? '/home' : ''}`,
    ...(c.alias !== null && { identifiers: [ALIASES[c.alias]] }),
  });
  let websiteId: string;
  if (h.provision) {
    const bodies = competitors.map(({ c, name }) => {
      const slot = m.nextSlot++;
      return { c, slot, body: compBody(c, name, slot) };
    });
    const prompts = h.prompts.map((branded, i) => ({ text: `prompt ${i}`, type: branded ? 'branded' : 'non_branded' }));
    const r = await ok('POST', '/api/v1/websites/provision', key, {
      name: brandName,
      url,
      competitors: bodies.map((b) => b.body),
      topics: [{ name: 'Topic', prompts }],
    });
    websiteId = r.body.website.id;
    m.brand = { id: websiteId, name: brandName, identifiers: [], domain: m.domain(0), is_self: true };
    const created = r.body.competitors as { id: string; name: string }[];
    for (const b of bodies) {
      if (b.c.below === 0) continue;
      const got = created.find((x) => x.name === b.body.name);
      if (!got) throw new Error(`provision did not create ${b.body.name}: ${JSON.stringify(r.body)}`);
      m.competitors.push({
        id: got.id,
        name: b.body.name,
        identifiers: b.body.identifiers ?? [],
        domain: m.domain(b.slot),
        is_self: false,
        slot: b.slot,
      });
    }
    expect(created.length).toBe(m.competitors.length);
    for (const [i, p] of (r.body.topics[0].prompts as { id: string }[]).entries()) {
      m.prompts.push({
        id: p.id,
        text: `prompt ${i}`,
        status: 'active',
        type: h.prompts[i] ? 'branded' : 'non_branded',
        deleted: false,
        answered: false,
        hard: false,
        topic: r.body.topics[0].id,
      });
    }
    m.topics.push({ id: r.body.topics[0].id, name: 'Topic', deleted: false, took: [] });
  } else {
    const r = await ok('POST', '/api/v1/websites', key, { name: brandName, url });
    websiteId = r.body.website.id;
    m.brand = { id: websiteId, name: brandName, identifiers: [], domain: m.domain(0), is_self: true };
    for (const { c, name } of competitors) await addCompetitor(key, websiteId, m, c, name);
    for (const [i, branded] of h.prompts.entries()) await createPrompt(key, websiteId, m, branded, i);
  }
  for (let i = 0; i < h.locations; i++) {
    const r = await ok('POST', '/api/v1/locations', key, { website_id: websiteId, location: `Place ${i}`, country: 'France' });
    m.locations.push({ id: r.body.id, name: `Place ${i}` });
  }
  for (const name of ['Price', 'Support']) {
    const r = await ok('POST', '/api/v1/attributes', key, { website_id: websiteId, name });
    m.attributes.push({ id: r.body.attribute.id, name });
  }
  if (h.schedule) {
    const r = await ok('POST', '/api/v1/prompt-schedules', key, {
      website_id: websiteId,
      name: 'Weekly',
      models: ['chatgpt'],
      frequency: 'weekly',
      samples_per_prompt: h.samples,
    });
    m.schedule = r.body.schedule.id;
    m.samples = h.samples;
  }
  return websiteId;
}

async function addCompetitor(key: string, websiteId: string, m: Model, c: CompetitorSpec, name: string) {
  const slot = m.nextSlot++;
  const url = c.below === 0 ? `https://${m.domain(0)}/compare/${slot}` : `https://${c.below === 1 ? 'www.' : ''}${m.domain(slot)}`;
  const body = { website_id: websiteId, name, url, ...(c.alias !== null && { identifiers: [ALIASES[c.alias]] }) };
  const r = await ok('POST', '/api/v1/competitors', key, body, c.below === 0 ? [400] : [201]);
  if (c.below !== 0)
    m.competitors.push({ id: r.body.competitor.id, name, identifiers: body.identifiers ?? [], domain: m.domain(slot), is_self: false, slot });
}

async function createPrompt(key: string, websiteId: string, m: Model, branded: boolean, i: number, topic: string | null = null) {
  const text = `prompt ${i}`;
  const r = await ok('POST', '/api/v1/prompts', key, {
    website_id: websiteId,
    text,
    type: branded ? 'branded' : 'non_branded',
    ...(topic && { topic_id: topic }),
  });
  m.prompts.push({
    id: r.body.prompt.id,
    text,
    status: 'active',
    type: branded ? 'branded' : 'non_branded',
    deleted: false,
    answered: false,
    hard: false,
    topic,
  });
}

/** what the histories did, for the summary line */
const tally: Record<string, number> = {};
const count = (what: string) => {
  tally[what] = (tally[what] ?? 0) + 1;
};

async function run(st: Step, key: string, websiteId: string, m: Model) {
  count(st.t);
  switch (st.t) {
    case 'import': {
      const items = st.items.flatMap((it: Item) => {
        const p = pick(m.importable(), it.prompt);
        if (!p) return [];
        const loc = it.location === 0 ? null : (pick(m.locations, it.location - 1) ?? null);
        const a: RefAnswer = {
          prompt_id: p.id,
          model: MODELS[it.model],
          run_at: new Date(DAY0 + it.day * 86_400_000 + it.minute * 60_000).toISOString(),
          text: textOf(m, it.tokens),
          citations: it.citations.map((c) => citation(m, c)),
          retrieved: it.retrieved.map((c) => citation(m, c)),
          location_id: loc?.id ?? null,
          schedule_id: it.scheduled === 0 ? m.schedule : null,
          // sent with every model: only the shopping models' count
          products: it.products.map(
            (c): RefCard => ({
              name: `${c.named < NAMES.length ? NAMES[c.named] : 'Widget'} ${LINES[c.line]} ${c.n}`,
              ...(c.brand < NAMES.length + ALIASES.length + 1 && {
                brand:
                  c.brand < NAMES.length
                    ? NAMES[c.brand]
                    : c.brand < NAMES.length + ALIASES.length
                      ? ALIASES[c.brand - NAMES.length]
                      : 'Generic Goods',
              }),
              ...(c.merchant < MERCHANTS.length && { merchant: MERCHANTS[c.merchant] }),
              ...(c.price !== null && { price: c.price * 2.5 }),
              ...(c.currency < CURRENCIES.length && { currency: CURRENCIES[c.currency] }),
              position: c.position,
            }),
          ),
          // always sent (even empty): the import's own observations replace finding them in the text
          observations: it.observations.map((o, j) => ({
            entity_id: o.entity === 0 ? m.brand.id : (pick(m.competitors, o.entity - 1) ?? m.brand).id,
            attribute_id: m.attributes[o.attribute].id,
            positive: o.positive,
            score: o.score === null ? null : ((o.positive ? 1 : -1) * o.score) / 10,
            text_span: `span ${j} of ${it.minute}`,
          })),
        };
        p.answered = true;
        return [a];
      });
      if (!items.length) return;
      const r = await ok('POST', '/api/v1/responses/import', key, { website_id: websiteId, responses: items });
      expect(r.body.imported).toBe(items.length);
      items.forEach((a, i) => {
        a.id = r.body.response_ids[i];
      });
      m.answers.push(...items);
      return;
    }
    case 'add': {
      const name = NAMES[st.c.name];
      if (!m.nameTaken(name)) await addCompetitor(key, websiteId, m, st.c, name);
      return;
    }
    case 'rename': {
      const c = pick(m.competitors, st.which);
      const name = NAMES[st.name];
      if (!c || m.nameTaken(name)) return;
      await ok('PATCH', `/api/v1/competitors/${c.id}`, key, { website_id: websiteId, name });
      c.name = name;
      return;
    }
    case 'identifiers': {
      const c = pick(m.competitors, st.which);
      if (!c) return;
      const identifiers = st.alias === null ? [] : [ALIASES[st.alias]];
      await ok('PATCH', `/api/v1/competitors/${c.id}`, key, { website_id: websiteId, identifiers });
      c.identifiers = identifiers;
      return;
    }
    case 'pause': {
      // a paused website answers 403 everywhere; resumed, its numbers are what they were
      await ok('PATCH', `/api/v1/websites/${websiteId}`, key, { status: 'paused' });
      await ok('POST', '/api/v1/metrics/mention-rate/cumulative', key, { website_id: websiteId }, [403]);
      await ok('PATCH', `/api/v1/websites/${websiteId}`, key, { status: 'active' });
      return;
    }
    case 'remove': {
      const c = pick(m.competitors, st.which);
      if (!c) return;
      await ok('DELETE', `/api/v1/competitors/${c.id}`, key, undefined, [200], { website_id: websiteId });
      m.competitors = m.competitors.filter((x) => x !== c);
      return;
    }
    case 'prompt':
      return createPrompt(key, websiteId, m, st.branded, m.prompts.length);
    case 'status': {
      const p = pick(
        m.prompts.filter((x) => !x.deleted),
        st.which,
      );
      if (!p) return;
      p.status = st.paused ? 'paused' : 'active';
      await ok('PATCH', `/api/v1/prompts/${p.id}`, key, { website_id: websiteId, status: p.status });
      return;
    }
    case 'topic': {
      const name = `Topic ${m.topics.length + 1}`;
      const r = await ok('POST', '/api/v1/topics', key, { website_id: websiteId, name });
      expect(r.body.restored).toBe(false);
      m.topics.push({ id: r.body.topic.id, name, deleted: false, took: [] });
      return createPrompt(key, websiteId, m, st.branded, m.prompts.length, r.body.topic.id);
    }
    case 'delete-topic': {
      const t = pick(
        m.topics.filter((x) => !x.deleted),
        st.which,
      );
      if (!t) return;
      const r = await ok('DELETE', `/api/v1/topics/${t.id}`, key, undefined, [200], { website_id: websiteId, delete_prompts: String(st.prompts) });
      t.deleted = true;
      // with delete_prompts, every live prompt of the topic is soft-deleted (answered or not)
      t.took = st.prompts ? m.prompts.filter((p) => p.topic === t.id && !p.deleted).map((p) => p.id) : [];
      for (const p of m.prompts) if (t.took.includes(p.id)) p.deleted = true;
      expect(r.body.deleted_prompt_count).toBe(t.took.length);
      return;
    }
    case 'restore-topic': {
      const t = pick(
        m.topics.filter((x) => x.deleted),
        st.which,
      );
      if (!t) return;
      const r = await ok('POST', '/api/v1/topics', key, { website_id: websiteId, name: t.name.toUpperCase() });
      expect(r.body).toMatchObject({ restored: true, topic: { id: t.id } });
      t.deleted = false;
      for (const p of m.prompts) if (t.took.includes(p.id)) p.deleted = false;
      t.took = [];
      return;
    }
    case 'run': {
      // a run of the simulated engines: its answers are today's; the reference reads their raw text and citations
      const schedule = st.custom ? m.schedule : null;
      const active = m.prompts.filter((p) => !p.deleted && p.status === 'active');
      const r = await ok(
        'POST',
        '/api/v1/response-streaming/start',
        key,
        { website_id: websiteId, ...(schedule && { schedule_id: schedule }) },
        active.length ? [202] : [400],
      );
      if (!active.length) return;
      const done = await finishedRun(s, key, websiteId, r.body.run_id, 120_000);
      expect(done).toMatchObject({ status: 'completed', failed: 0 });
      await caughtUp(s, ['answers'], 60_000);
      const rows: {
        id: string;
        prompt_id: string;
        model: string;
        run_at: Date;
        text: string;
        citations: string[];
        export_json: string;
        location_id: string | null;
        schedule_id: string | null;
        sample_index: number;
      }[] = await s.rt.database
        .db('rm_responses')
        .where({ website_id: websiteId, run_id: r.body.run_id })
        .select('id', 'prompt_id', 'model', 'run_at', 'text', 'citations', 'export_json', 'location_id', 'schedule_id', 'sample_index');
      expect(rows.length).toBe(done.recorded);
      // every unit answered once per sample of its schedule (the default schedule: one)
      const samples = schedule ? m.samples : 1;
      const perUnit = new Map<string, number[]>();
      for (const x of rows) {
        const unit = `${x.prompt_id}/${x.model}/${x.location_id}`;
        perUnit.set(unit, [...(perUnit.get(unit) ?? []), x.sample_index]);
      }
      for (const indices of perUnit.values()) expect(indices.sort()).toEqual(Array.from({ length: samples }, (_, i) => i));
      if (samples > 1) count('runs with samples');
      expect(new Set(rows.map((x) => x.prompt_id))).toEqual(new Set(active.map((p) => p.id)));
      for (const p of active) p.answered = true;
      // the cards the engine showed, as recorded (name, brand, merchant, price, currency, position): the reference
      // attributes them itself
      const cards: (RefCard & { response_id: string })[] = await s.rt.database
        .db('rm_response_products')
        .whereIn(
          'response_id',
          rows.map((x) => x.id),
        )
        .orderBy(['response_id', 'idx'])
        .select('response_id', 'name', 'brand', 'merchant', 'price', 'currency', 'position');
      m.answers.push(
        ...rows.map(({ sample_index: _, export_json, ...x }) => ({
          ...x,
          // the engine's reported pages as recorded (the reference decides itself which are cited)
          retrieved: recordedFields(export_json).retrieved.map(({ url }) => url),
          run_at: x.run_at.toISOString(),
          products: cards.filter((c) => c.response_id === x.id).map(({ response_id: _, ...c }) => c),
        })),
      );
      return;
    }
    case 'delete-prompt': {
      const p = pick(
        m.prompts.filter((x) => !x.deleted),
        st.which,
      );
      if (!p) return;
      const r = await ok('DELETE', `/api/v1/prompts/${p.id}`, key, undefined, [200], { website_id: websiteId });
      expect(r.body.soft_deleted).toBe(p.answered);
      p.deleted = true;
      p.hard = !p.answered;
      return;
    }
  }
}

const COMPARED: CompareMetricRef[] = ['mention_rate', 'share_of_voice', 'citation_rate', 'avg_position'];
/** the periods compared: the first three days of the imports, then everything after (runs' answers are today's) */
const PREVIOUS = { previous_start: '2026-03-01', previous_end: '2026-03-03' };
const CURRENT = { current_start: '2026-03-04', current_end: '2099-12-31' };
const span = (start: string, end: string): [number, number] => [Date.parse(`${start}T00:00:00Z`), Date.parse(`${end}T23:59:59.999Z`)];

/** A filters body as the GET reads' query: lists comma-separated. */
const asQuery = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]));

/** One filter set's reads: through which server, with which key, of which website and history, and the label of its differences. */
interface Reading {
  via: TestServer;
  key: string;
  websiteId: string;
  m: Model;
  filters: { body: Record<string, unknown>; ref: RefFilters };
  label: string;
}

/**
 * GET /metrics/compare (every metric) and /metrics/stability under one filter set, against the reference's own Wilson,
 * Newcombe and z-test: values within the rounding (two decimals), p-values within 1e-4, verdicts exactly.
 */
async function compareSignal({ via, key, websiteId, m, filters, label }: Reading) {
  const out: string[] = [];
  const entities = m.entities();
  const { start_date, end_date, ...rest } = filters.body;
  const { start: _s, end: _e, ...refNoDates } = filters.ref;
  const compared = await Promise.all(
    COMPARED.map((metric) =>
      ok('GET', '/api/v1/metrics/compare', key, undefined, [200], { website_id: websiteId, metric, ...CURRENT, ...PREVIOUS, ...asQuery(rest) }, via),
    ),
  );
  COMPARED.forEach((metric, i) => {
    const exp = expectedComparison(
      metric,
      entities,
      m.answers,
      m.prompts,
      refNoDates,
      span(CURRENT.current_start, CURRENT.current_end),
      span(PREVIOUS.previous_start, PREVIOUS.previous_end),
    );
    const got = compared[i].body;
    const where = `compare ${metric} ${label}`;
    out.push(
      ...differences(
        { c: got.current.responses, p: got.previous.responses },
        { c: exp.current.responses, p: exp.previous.responses },
        `${where} responses`,
        0,
      ),
    );
    out.push(...differences(got.data, exp.data, where, 0.0051, new Set(['p_value'])).slice(0, 6));
    const pValues = (d: Record<string, { p_value: number | null }>) => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, v.p_value]));
    out.push(...differences(pValues(got.data), pValues(exp.data as never), `${where} p_value`, 1e-4).slice(0, 6));
  });
  // stability: the request's dates, else a range holding every answer
  const range = { start_date: (start_date as string | undefined) ?? '2026-01-01', end_date: (end_date as string | undefined) ?? '2099-12-31' };
  const stRef: RefFilters = {
    ...refNoDates,
    start: start_date === undefined ? Date.parse('2026-01-01T00:00:00Z') : filters.ref.start,
    end: end_date === undefined ? Date.parse('2099-12-31T23:59:59.999Z') : filters.ref.end,
  };
  const { competitor_ids: _c, ...stRest } = rest;
  const st = await ok('GET', '/api/v1/metrics/stability', key, undefined, [200], { website_id: websiteId, ...range, ...asQuery(stRest) }, via);
  const rows = st.body.data as { prompt_id: string; model: string; volatility: number }[];
  const exp = expectedStability(entities, m.answers, m.prompts, stRef);
  const byKey = [...rows].sort((a, b) =>
    a.prompt_id < b.prompt_id ? -1 : a.prompt_id > b.prompt_id ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0,
  );
  out.push(...differences({ data: byKey, summary: st.body.summary }, exp, `stability ${label}`, 0.0051).slice(0, 6));
  if (rows.some((r, i) => i > 0 && r.volatility > rows[i - 1].volatility)) out.push(`stability ${label}: not sorted by volatility desc`);
  return out;
}

/** Every metric endpoint under one filter set, against the reference; returns the differences found. */
async function compare(
  via: TestServer,
  key: string,
  websiteId: string,
  m: Model,
  filters: { body: Record<string, unknown>; ref: RefFilters },
): Promise<string[]> {
  const out: string[] = [];
  const entities = m.entities();
  const label = JSON.stringify(filters.body);
  const ignore = new Set(['schedule']);
  const schedule = filters.ref.schedule_id ?? 'default';
  // the reads at once: the server answers them side by side, and concurrent requests of a website share one read of its
  // rows (readForMetricsGrouped). The first starts a read alone; an unfiltered one, sent second, heads the next shared
  // read with the filtered requests behind it, so the numbers are checked on a read shared by requests of other needs
  const post = (family: string, kind: string, body: Record<string, unknown>) =>
    ok('POST', `/api/v1/metrics/${family}/${kind}`, key, { website_id: websiteId, filters: body }, [200], undefined, via);
  const [first, unfiltered, ...rest] = await Promise.all([
    post(FAMILIES[0], 'cumulative', filters.body),
    post(FAMILIES[0], 'cumulative', {}),
    post(FAMILIES[0], 'time-series', filters.body),
    ...FAMILIES.slice(1).flatMap((family) => [post(family, 'cumulative', filters.body), post(family, 'time-series', filters.body)]),
  ]);
  const reads = [first, ...rest];
  out.push(
    ...differences(
      unfiltered.body,
      expectedCumulative(FAMILIES[0], entities, m.answers, m.prompts, {}),
      `${FAMILIES[0]}/cumulative {} beside ${label}`,
      1e-4,
      ignore,
    ).slice(0, 6),
  );
  FAMILIES.forEach((family, i) => {
    const [cum, ts] = [reads[2 * i], reads[2 * i + 1]];
    const exp = expectedCumulative(family, entities, m.answers, m.prompts, filters.ref);
    out.push(...differences(cum.body, exp, `${family}/cumulative ${label}`, 1e-4, ignore).slice(0, 6));
    if (cum.body.schedule !== schedule) out.push(`${family}/cumulative ${label}: schedule ${cum.body.schedule} != ${schedule}`);
    const keys = Object.keys(cum.body.data ?? {});
    if (keys[0] !== m.brand.name) out.push(`${family}/cumulative ${label}: the brand is not first (${keys.join(', ')})`);
    const expTs = expectedTimeSeries(family, entities, m.answers, m.prompts, filters.ref);
    out.push(...differences(ts.body.data, expTs, `${family}/time-series ${label}`, 1e-4, ignore).slice(0, 6));
  });
  const conn = await ok(
    'POST',
    '/api/v1/looker-studio/data',
    key,
    { website_id: websiteId, filters: filters.body, page_size: 10_000 },
    [200],
    undefined,
    via,
  );
  const expRows = expectedConnectorRows(entities, m.answers, m.prompts, new Map(m.locations.map((l) => [l.id, l.name])), filters.ref);
  const order = (r: Record<string, unknown>) => JSON.stringify([r.date, r.model, r.prompt_id, r.location_id, r.entity_id]);
  const sortRows = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
  out.push(...differences(sortRows(conn.body.rows), sortRows(expRows), `looker-studio/data ${label}`, 1e-4, ignore).slice(0, 6));
  if (conn.body.has_more) out.push(`looker-studio/data ${label}: has_more with ${conn.body.rows.length} rows`);
  // the answers listing: every page
  const listed = await allPages(via, '/api/v1/responses', key, { website_id: websiteId, filters: filters.body }, 'responses');
  const fields = ['id', 'prompt_id', 'model', 'response', 'mentioned', 'cited', 'position', 'created_at', 'competitors'] as const;
  const shown = listed.map((x) => ({
    ...Object.fromEntries(fields.map((f) => [f, x[f]])),
    competitors: (x.competitors as { id: string; name: string; position: number }[]).map(({ id, name, position }) => ({ id, name, position })),
  }));
  out.push(...differences(shown, expectedListing(entities, m.answers, m.prompts, filters.ref), `responses ${label}`, 0).slice(0, 6));
  const reading: Reading = { via, key, websiteId, m, filters, label };
  out.push(...(await compareSignal(reading)));
  out.push(...(await compareShopping(via, key, websiteId, m, filters.ref, label)));
  out.push(...(await compareSources(via, key, websiteId, m, filters.ref, label)));
  out.push(...(await compareContent(reading)));
  // attribute observations of the imported answers (those of runs come from the text: not compared), newest first
  // competitor_ids is refused there, and dates must be date-times (start_date required): the selection's range, sent
  // explicitly (it replaces a view's)
  const { competitor_ids: _, ...obsFilters } = filters.body;
  const obsRef: RefFilters = {
    ...filters.ref,
    start: filters.ref.start ?? Date.parse('2026-01-01T00:00:00Z'),
    end: filters.ref.end ?? Date.parse('2030-01-01T00:00:00Z'),
  };
  obsFilters.start_date = new Date(obsRef.start!).toISOString();
  obsFilters.end_date = new Date(obsRef.end!).toISOString();
  const observed = await allPages(
    via,
    '/api/v1/attributes/observations',
    key,
    { website_id: websiteId, filters: obsFilters, sort: 'recent' },
    'data',
  );
  const times = observed.map((o) => String(o.created_at));
  if (times.some((t, i) => i > 0 && t > times[i - 1])) out.push(`observations ${label}: sort recent is not newest first`);
  const imported = new Set(m.answers.filter((a) => a.observations).map((a) => a.id));
  const obsFields = [
    'response_id',
    'entity_id',
    'entity_name',
    'is_website',
    'attribute_id',
    'attribute_name',
    'positive',
    'score',
    'text_span',
    'model',
    'created_at',
  ];
  const canon = (xs: Record<string, unknown>[]) => xs.map((o) => JSON.stringify(obsFields.map((f) => o[f]))).sort();
  const expObs = expectedObservations(entities, new Map(m.attributes.map((a) => [a.id, a.name])), m.answers, m.prompts, obsRef);
  out.push(
    ...differences(canon(observed.filter((o) => imported.has(o.response_id as string))), canon(expObs), `observations ${label}`, 0).slice(0, 6),
  );
  return out;
}

/**
 * GET /api/v1/sources by domain and by URL over the whole UTC days of the filters' range and their models (the
 * endpoint takes only those), every page, against the reference.
 */
async function compareSources(via: TestServer, key: string, websiteId: string, m: Model, ref: RefFilters, label: string): Promise<string[]> {
  const day = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString().slice(0, 10));
  const f = { startDay: day(ref.start), endDay: day(ref.end), models: ref.models };
  const query: Record<string, string> = { website_id: websiteId };
  if (f.startDay) query.start_date = f.startDay;
  if (f.endDay) query.end_date = f.endDay;
  if (f.models) query.models = f.models.join(',');
  const out: string[] = [];
  for (const group_by of ['domain', 'url'] as const) {
    const rows: unknown[] = [];
    for (let page = 0; page < 50; page++) {
      const r = await ok('GET', '/api/v1/sources', key, undefined, [200], { ...query, group_by, page_num: String(page), page_size: '100' }, via);
      rows.push(...r.body.data);
      if (!r.body.has_more) break;
    }
    const exp = expectedSources(m.entities(), m.answers, f, group_by);
    tally['sources rows'] = (tally['sources rows'] ?? 0) + exp.length;
    out.push(...differences(rows, exp, `sources ${group_by} ${label}`, 1e-9).slice(0, 6));
  }
  return out;
}

/** Websites whose content pages are tracked (once per website: tracking is idempotent, but costs a call). */
const contentTracked = new Set<string>();
let contentCompares = 0;

/**
 * The content hub's figures under the same filters: pages tracked on the domains the answers cite (citation forms
 * that normalize to them, one no answer cites), the listing's citations, total_responses and citation_percent per
 * page (all answers, then the brand-mention filter one way or the other), and the per-prompt breakdown of the most
 * cited page, against the reference joining the answers' cited URLs by the shared normalization.
 */
async function compareContent({ via, key, websiteId, m, filters, label }: Reading): Promise<string[]> {
  const out: string[] = [];
  const urls = [0, 1, 2].flatMap((i) => [`https://${m.domain(i)}/p`, `blog.${m.domain(i)}/post`, `http://www.${m.domain(i)}`]);
  urls.push('https://news.example.net/review', 'https://nobody-cites.example.org/page');
  if (!contentTracked.has(websiteId)) {
    await ok('POST', '/api/v1/content/track', key, { website_id: websiteId, urls: urls.map((url) => ({ url })) });
    contentTracked.add(websiteId);
  }
  const normalized = urls.map(normalizeUrl);
  const entities = m.entities();
  // one brand-mention filter per comparison, in turn: none, mentioned, not mentioned
  const which = [undefined, true, false][contentCompares++ % 3];
  let top: { content_id: string; citations: number } | null = null;
  {
    const r = await ok(
      'POST',
      '/api/v1/content',
      key,
      { website_id: websiteId, filters: filters.body, ...(which !== undefined && { mentioned: which }), page_num: 0, page_size: 100 },
      [200],
      undefined,
      via,
    );
    const items = r.body.content as {
      content_id: string;
      normalized_url: string;
      citations: number;
      total_responses: number;
      citation_percent: number;
    }[];
    const shown = Object.fromEntries(
      items.map((x) => [x.normalized_url, { citations: x.citations, total_responses: x.total_responses, citation_percent: x.citation_percent }]),
    );
    const exp = expectedContent(entities, m.answers, m.prompts, filters.ref, normalized, which);
    out.push(...differences(shown, exp, `content mentioned=${which} ${label}`, 1e-9).slice(0, 6));
    for (const x of items) if (x.citations > (top?.citations ?? 0)) top = x;
    tally['content pages cited'] = (tally['content pages cited'] ?? 0) + Object.values(exp).filter((x) => x.citations > 0).length;
  }
  if (top) {
    const item = top;
    const r = await ok(
      'POST',
      '/api/v1/content/prompts',
      key,
      { website_id: websiteId, content_id: item.content_id, filters: filters.body, mentioned: which },
      [200],
      undefined,
      via,
    );
    const listed = r.body.prompts as { prompt_id: string; citations: number }[];
    if (listed.some((x, i) => i > 0 && x.citations > listed[i - 1].citations)) out.push(`content/prompts ${label}: not most citations first`);
    const url = (r.body.content_normalized_url as string) ?? '';
    const sorted = [...listed].sort((a, b) => (a.prompt_id < b.prompt_id ? -1 : 1));
    const exp = expectedContentPrompts(entities, m.answers, m.prompts, filters.ref, url, which);
    if (!normalized.includes(url)) out.push(`content/prompts ${label}: ${url} is not a tracked page`);
    out.push(...differences(sorted, exp, `content/prompts mentioned=${which} ${label}`, 1e-9).slice(0, 6));
    tally['content prompts compared'] = (tally['content prompts compared'] ?? 0) + exp.length;
  }
  return out;
}

/**
 * Shopping visibility under the same selection, as far as the shopping endpoint takes it: its models (the shopping
 * ones among those asked), schedule, competitors and dates (whole UTC days: a time is widened to its day), plus
 * target identifiers; prompts, locations, statuses and types are not its filters (nor saved views).
 */
async function compareShopping(via: TestServer, key: string, websiteId: string, m: Model, ref: RefFilters, label: string): Promise<string[]> {
  const body: Record<string, unknown> = {};
  const sref: RefShoppingFilters = {};
  const models = ref.models?.filter((x) => SHOPPING_MODEL_IDS.includes(x));
  if (models?.length) sref.models = body.models = models;
  if (ref.schedule_id !== undefined) {
    sref.schedule_id = ref.schedule_id;
    body.schedule_id = ref.schedule_id ?? 'default';
  }
  if (ref.competitor_ids) sref.competitor_ids = body.competitor_ids = ref.competitor_ids;
  if (ref.target_identifiers) sref.target_identifiers = body.target_identifiers = ref.target_identifiers;
  const day = (t: number) => new Date(t).toISOString().slice(0, 10);
  if (ref.start !== undefined) {
    body.start_date = day(ref.start);
    sref.start = Date.parse(`${body.start_date}T00:00:00Z`);
  }
  if (ref.end !== undefined) {
    body.end_date = day(ref.end);
    sref.end = Date.parse(`${body.end_date}T23:59:59.999Z`);
  }
  const r = await ok('POST', '/api/v1/metrics/shopping', key, { website_id: websiteId, filters: body }, [200], undefined, via);
  const exp = expectedShopping(m.entities(), m.answers, m.prompts, SHOPPING_MODEL_IDS, sref);
  const slabel = `shopping ${JSON.stringify(body)} (from ${label})`;
  const out: string[] = [];
  // the blocks the reference computes; the summary without own_products / competitor_products (distinct products)
  const actual = { ...r.body, summary: Object.fromEntries(Object.keys(exp.summary).map((k) => [k, r.body.summary?.[k]])) };
  const rest = new Set(['schedule', 'models', 'top_own_products', 'top_competitor_products', 'competitor_breakdown', 'price_comparison']);
  out.push(...differences(actual, exp, slabel, 0.011, rest).slice(0, 6));
  if (!exp.summary.answers && r.body.offer_summary?.cards) out.push(`${slabel}: cards without answers`);
  tally['shopping cards compared'] = (tally['shopping cards compared'] ?? 0) + exp.offer_summary.cards;
  if (exp.offer_summary.own_cards) count('shopping reads with own cards');
  if (exp.offer_summary.competitor_cards) count('shopping reads with competitor cards');
  return out;
}

/**
 * What happens to the whole server between the histories and the reads: nothing; a rebuild of the answers read model
 * (beside the live one, then swapped); reads through a second instance over the same database; or that second
 * instance restarted first (a cold cache). The last two need a real Postgres server.
 */
const world = fc.constantFrom('none', 'none', 'none', 'rebuild', 'second', 'restart');
type World = typeof world extends fc.Arbitrary<infer T> ? T : never;

/** Histories run side by side (their writes wait on the read models: together they share the wait). */
const BATCH = 4;

let second: TestServer | null = null;

/** A rebuild reads the whole log (every history so far): at most one per REBUILD_GAP histories, so the long run stays linear-ish. */
const REBUILD_GAP = 30;
let rebuiltAt = -REBUILD_GAP;

async function apply(w: World): Promise<TestServer> {
  if (w === 'rebuild') {
    if (cases - rebuiltAt < REBUILD_GAP) return s;
    rebuiltAt = cases;
    count('rebuilds');
    await s.rt.runners.get('answers')!.rebuild();
    return s;
  }
  if (!second) return s;
  if (w === 'restart') {
    await second.close();
    second = await startServer({ RATE_LIMIT_PER_MIN: '1000000' }, {}, s);
  }
  if (w !== 'none') {
    await caughtUp(second, ['answers'], 60_000);
    return second;
  }
  return s;
}

/** One history: build it, return what to compare once the read models caught up. */
async function play(h: History) {
  cases++;
  const m = new Model(Math.random().toString(36).slice(2, 7).replace(/\d/g, 'q'));
  const websiteId = await build(h, key, m);
  count(h.provision ? 'provisioned' : 'created');
  for (const st of h.steps) await run(st, key, websiteId, m);
  return { h, m, websiteId };
}

/** Up to BATCH histories side by side, then the world, then every comparison. */
async function batch(hs: History[], w: World) {
  const t0 = performance.now();
  const played = await Promise.all(hs.map(play));
  const t1 = performance.now();
  // a catalogue change re-derives the history after the write answered: compare once it is done
  await caughtUp(s, ['answers'], 60_000);
  const t2 = performance.now();
  const via = await apply(w);
  count(`world:${w}`);
  const t3 = performance.now();
  const problems: string[] = [];
  for (const { h, m, websiteId } of played) {
    const sets = [{ body: {}, ref: {} }, ...(await Promise.all(h.filters.map((q) => queryOf(key, websiteId, m, q))))];
    for (const f of sets)
      problems.push(...(await compare(via, key, websiteId, m, f)).map((p) => `${h.provision ? 'provisioned' : 'created'} site, ${w}: ${p}`));
  }
  if (process.env.DIFF_TRACE)
    console.log(
      `batch of ${hs.length}, ${w}: play ${(t1 - t0).toFixed(0)} caught up ${(t2 - t1).toFixed(0)} world ${(t3 - t2).toFixed(0)} compare ${(performance.now() - t3).toFixed(0)} ms`,
    );
  if (problems.length) throw new Error(`${problems.length} differences:\n${problems.slice(0, 20).join('\n')}`);
}

/** the runs: RUNS cases of 1 to BATCH histories each, so about RUNS histories */
const NUM_RUNS = Math.ceil(RUNS / ((1 + BATCH) / 2));

/**
 * Registers half `half` (0 or 1) of the differential test in the calling file: its servers (hooks) and its test, the
 * first half's runs or the second's, from the same seed. Module state is reset here: a worker may run both files.
 */
export function metricsDifferential(half: 0 | 1): void {
  const first = Math.ceil(NUM_RUNS / 2);
  const runs = half === 0 ? first : NUM_RUNS - first;
  beforeAll(async () => {
    cases = 0;
    rebuiltAt = -REBUILD_GAP;
    for (const k of Object.keys(tally)) delete tally[k];
    contentTracked.clear();
    contentCompares = 0;
    // cumulative selections over whole days read blocks of several days, and daily ones a whole day's parts summed
    // (queries/metrics/blocks.ts): here blocks of 2 days and of 1, day blocks of a single part, and sums by prompt kept
    // however few answers, so the histories' few days and answers span blocks
    setBlockLevels([1, 0], 1, 0);
    s = await startServer({ RATE_LIMIT_PER_MIN: '1000000' });
    if (onRealPostgres) second = await startServer({ RATE_LIMIT_PER_MIN: '1000000' }, {}, s);
    // one organization, a new website per history
    key = (await s.org('Differential')).key;
  });
  afterAll(async () => {
    setBlockLevels([...DEFAULT_BLOCK_LEVELS]);
    await second?.close();
    second = null;
    await s?.close();
  });

  describe('metrics differential', () => {
    const from = half === 0 ? 0 : first;
    it(`given random histories (runs ${from + 1}-${from + runs} of ${NUM_RUNS}, about ${RUNS} cases in all, seed ${SEED}), then every metric endpoint agrees with the reference`, async () => {
      const started = performance.now();
      const blocksBefore = { ...blockCounts };
      await fc.assert(
        fc.asyncProperty(fc.array(history, { minLength: 1, maxLength: BATCH }), world, async (hs, w) => {
          try {
            await batch(hs, w);
          } catch (err) {
            // DIFF_FAIL_LOG=file: every failing batch as it happens (shrinking can take long)
            if (process.env.DIFF_FAIL_LOG)
              appendFileSync(process.env.DIFF_FAIL_LOG, `${JSON.stringify({ hs, w })}\n${err instanceof Error ? err.message : String(err)}\n\n`);
            throw err;
          }
        }),
        // the second half: the seed's runs after the first half's (path "N" skips N runs' values without running them)
        { numRuns: runs, seed: SEED, ...(from ? { path: String(from) } : {}) },
      );
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `metrics_differential_cases_per_s ${(cases / seconds).toFixed(2)} cases/s (${cases} histories incl. shrinking, ${seconds.toFixed(1)} s, seed ${SEED}, runs ${from + 1}-${from + runs})`,
      );
      console.log(
        `what they did: ${JSON.stringify(tally)}; blocks added ${blockCounts.added - blocksBefore.added}, built ${blockCounts.built - blocksBefore.built}`,
      );
      // cumulative selections were answered from blocks
      expect(blockCounts.added).toBeGreaterThan(blocksBefore.added);
      // and no block failed to build in the background (a failure is dropped there, so only this count shows it)
      expect(blockCounts.failed - blocksBefore.failed, blockCounts.lastError ?? '').toBe(0);
    }, 3_600_000);
  });
}
