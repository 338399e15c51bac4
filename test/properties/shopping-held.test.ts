import fc from 'fast-check';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { heldBlocks, promptsTagged, shoppingMetrics, statementBlocks } from '../../queries/shopping/metrics';
import { rollupCounts } from '../../queries/shopping/rollups';
import type { ShoppingSelection } from '../../queries/shopping/types';
import { MODEL_IDS, SHOPPING_MODEL_IDS, isShoppingModelId } from '../../src/domain/models';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';

/**
 * The shopping blocks computed from the cards held in process (queries/shopping/cards-cache.ts, fast.ts) against the
 * plain statement they replace (queries/shopping/sql.ts): random websites' answers and cards written through the
 * import, in two batches (the second loads only the days it changed), then random selections (dates down to the
 * minute, models, prompts by tags, schedule, competitors, target identifiers, top limit) answered by both.
 *
 * Selections over every prompt without target identifiers take whole days from day-range rollups
 * (queries/shopping/rollups.ts; aligned ranges of 1, 2 and 4 days over the DAYS days but the two newest, which are
 * walked) and walk the partial days at either end; the others walk every card: both are compared, and the second
 * batch's days drop the rollups holding them.
 */

let s: TestServer;
let w: World;
useWorld((ctx) => {
  ({ s, w } = ctx);
}, sharedServer);

const [SM0, SM1] = SHOPPING_MODEL_IDS;
const OTHER_MODEL = MODEL_IDS.find((m) => !isShoppingModelId(m))!;
const MODELS = [SM0, SM1, OTHER_MODEL];
const COMPETITORS = ['Globex', 'Initech', 'Hooli'];
/** card brands: the website's, its competitors', an untracked one, a spelling of the website's, none */
const BRANDS = ['Acme', ...COMPETITORS, 'Zed', 'ACME', null];
const LINES = ['Pro', 'Mini', 'Max', 'Pro  Max'];
const MERCHANTS = ['Amazon', 'amazon', 'Best Buy', 'Walmart', null];
const CURRENCIES = ['USD', 'EUR', 'usd', null];
const TAGS = ['gift', 'audio', 'sale'];
const TARGETS = [['Pro'], ['max', 'Mini 2'], ['acme pro'], ['Nothing']];
const DAY0 = Date.parse('2026-03-01T00:00:00Z');
const DAYS = 9;
const DAY_MS = 86_400_000;

const cardArb = fc.record({
  brand: fc.nat(BRANDS.length - 1),
  line: fc.nat(LINES.length - 1),
  n: fc.nat(2),
  position: fc.integer({ min: 1, max: 12 }),
  merchant: fc.nat(MERCHANTS.length - 1),
  url: fc.boolean(),
  price: fc.oneof(
    fc.constant(null),
    fc.integer({ min: 1, max: 300 }),
    fc.integer({ min: 100, max: 30000 }).map((c) => c / 100),
  ),
  currency: fc.nat(CURRENCIES.length - 1),
});
const answerArb = fc.record({
  prompt: fc.nat(3),
  model: fc.nat(MODELS.length - 1),
  day: fc.nat(DAYS - 1),
  minute: fc.nat(24 * 60 - 1),
  scheduled: fc.nat(4), // 0: the custom schedule
  cards: fc.array(cardArb, { maxLength: 6 }),
});
const selectionArb = fc.record({
  from: fc.option(fc.nat(DAYS * 24 * 60 - 1), { nil: undefined, freq: 3 }),
  span: fc.nat(DAYS * 24 * 60),
  wholeDays: fc.boolean(),
  models: fc.oneof(fc.constant([SM0, SM1]), fc.subarray(MODELS, { minLength: 1 })),
  tags: fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.subarray(TAGS, { minLength: 1 }) }),
  all: fc.boolean(),
  scheduled: fc.nat(3).map((n) => n === 0),
  competitors: fc.option(fc.nat(7), { nil: undefined }), // bits over the three competitors
  target: fc.option(fc.nat(TARGETS.length - 1), { nil: undefined }),
  top: fc.integer({ min: 1, max: 4 }),
});
const caseArb = fc.record({
  first: fc.array(answerArb, { minLength: 10, maxLength: 30 }),
  second: fc.array(answerArb, { minLength: 1, maxLength: 15 }),
  promptTags: fc.array(fc.subarray(TAGS), { minLength: 4, maxLength: 4 }),
  selections: fc.array(selectionArb, { minLength: 8, maxLength: 8 }),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

async function created(path: string, body: unknown) {
  const r = await call(s, 'POST', path, { key: w.a.key, body });
  expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
}

interface Site {
  id: string;
  competitors: string[];
  prompts: string[];
  schedule: string;
}

async function site(c: Case, n: number): Promise<Site> {
  const id = (await created('/api/v1/websites', { name: 'Acme', url: `https://acme-${n}.example.com` })).website.id as string;
  const competitors: string[] = [];
  for (const name of COMPETITORS)
    competitors.push(
      (await created('/api/v1/competitors', { website_id: id, name, url: `https://${name.toLowerCase()}.example.net` })).competitor.id,
    );
  const prompts: string[] = [];
  for (let i = 0; i < 4; i++)
    prompts.push((await created('/api/v1/prompts', { website_id: id, text: `Best gadget ${i}?`, tags: c.promptTags[i] })).prompt.id);
  const schedule = (await created('/api/v1/prompt-schedules', { website_id: id, name: 'Daily', models: [SM0], frequency: 'daily' })).schedule.id;
  return { id, competitors, prompts, schedule };
}

async function importAnswers(x: Site, answers: Case['first']) {
  const responses = answers.map((a) => ({
    prompt_id: x.prompts[a.prompt],
    model: MODELS[a.model],
    run_at: new Date(DAY0 + a.day * DAY_MS + a.minute * 60_000).toISOString(),
    text: 'Some options.',
    ...(a.scheduled === 0 ? { schedule_id: x.schedule } : {}),
    products: a.cards.map((c) => {
      const brand = BRANDS[c.brand];
      return {
        name: `${brand ?? 'Acme'} ${LINES[c.line]} ${c.n + 1}`,
        brand,
        position: c.position,
        merchant: MERCHANTS[c.merchant],
        ...(c.url ? { url: `https://shop.example.org/p/${c.line}-${c.n}` } : {}),
        price: c.price,
        currency: CURRENCIES[c.currency],
      };
    }),
  }));
  expect((await created('/api/v1/responses/import', { website_id: x.id, responses })).imported).toBe(responses.length);
  await s.rt.waitForReadModels(await s.rt.store.lastPosition(), 'all');
}

async function selection(db: Knex, x: Site, sel: Case['selections'][number]): Promise<ShoppingSelection> {
  const start = sel.from === undefined ? undefined : DAY0 + (sel.wholeDays ? Math.floor(sel.from / 1440) * DAY_MS : sel.from * 60_000);
  const end =
    start === undefined ? DAY0 + sel.span * 60_000 : sel.wholeDays ? start + Math.ceil(sel.span / 1440) * DAY_MS - 1 : start + sel.span * 60_000;
  const promptIds = sel.tags.length ? await promptsTagged(db, x.id, x.prompts, sel.tags, sel.all ? 'all' : 'any') : x.prompts;
  return {
    websiteId: x.id,
    scheduleId: sel.scheduled ? x.schedule : null,
    ...(start === undefined ? {} : { start: new Date(start) }),
    ...(sel.span === DAYS * 24 * 60 ? {} : { end: new Date(end) }),
    models: sel.models,
    promptIds,
    ...(sel.competitors === undefined ? {} : { competitorIds: x.competitors.filter((_, i) => (sel.competitors! >> i) & 1) }),
    ...(sel.target === undefined ? {} : { targetIdentifiers: TARGETS[sel.target] }),
    topProductsLimit: sel.top,
  };
}

describe('shopping: the held cards against the plain statement', () => {
  it('given random answers and cards imported in two batches, when random selections are asked, then the held cards answer exactly as the statement', async () => {
    let n = 0;
    // what the selections covered: a run that compared only empty answers proves nothing
    const seen = { answers: 0, own: 0, competitor: 0, priced: 0, partial: 0, rollups: 0, rollupsWithPartial: 0, walked: 0, rebuilt: 0 };
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const db = s.rt.database.db;
        const x = await site(c, n++);
        const compare = async () => {
          for (const sel of c.selections) {
            const q = await selection(db, x, sel);
            const added = rollupCounts.added;
            const held = await shoppingMetrics(db, q, heldBlocks);
            const rolled = rollupCounts.added > added;
            const plain = await shoppingMetrics(db, q, statementBlocks);
            expect(held, JSON.stringify(q)).toEqual(plain);
            if (plain.summary.answers) seen.answers++;
            if (plain.offer_summary.own_cards) seen.own++;
            if (plain.offer_summary.competitor_cards) seen.competitor++;
            if (plain.price_comparison.some((p) => p.own_cards > 1 && p.competitor_cards > 0)) seen.priced++;
            if (!sel.wholeDays && sel.from !== undefined && plain.summary.answers) seen.partial++;
            if (rolled && plain.summary.answers) seen.rollups++;
            if (rolled && !sel.wholeDays && sel.from !== undefined && plain.summary.answers) seen.rollupsWithPartial++;
            if (!rolled && plain.summary.answers) seen.walked++;
          }
        };
        await importAnswers(x, c.first);
        await compare();
        // the website is held now: the second batch loads only the days it changed
        const built = rollupCounts.built;
        await importAnswers(x, c.second);
        await compare();
        // the changed days' ranges were dropped and built again (when a selection asked for them)
        if (rollupCounts.built > built) seen.rebuilt++;
      }),
      // no shrinking: every run writes a website through the server (a failure is reported as drawn)
      { numRuns: Number(process.env.SHOPPING_RUNS ?? 8), seed: 20261125, endOnFailure: true },
    );
    for (const [k, v] of Object.entries(seen)) expect(v, `selections with ${k}`).toBeGreaterThan(0);
  }, 600_000);
});
