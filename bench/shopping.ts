import type { DuckDBConnection } from '@duckdb/node-api';
import { updatePrompt } from '../commands/catalog/update-prompt';
import { trackedEntities } from '../queries/responses/list';
import { wholeWordPattern } from '../queries/shopping/sql';
import { isDomainError } from '../src/domain/errors';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { SHOPPING_MODEL_IDS } from '../src/domain/models';
import { type AnswerDataset, answersBench, caughtUp } from './answers';
import { withDuckDb } from './duckdb';
import { cpuMeter, info, nowNs, postOk, report, warmedUp } from './lib';

const DAY_MS = 86_400_000;
const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);
const dayOf = (d: Date) => Math.floor(d.getTime() / DAY_MS);
/** the tag the bench puts on two prompts in five (the dataset's prompts have none) */
const TAG = 'bench-shopping';
/** the brand's product line the filtered case targets */
const TARGET = 'Acme Pro';

/** p50/p95 of `n` requests one after another (after 3 not counted), in ms, and the last answer. */
async function latency(ds: AnswerDataset, body: unknown, n: number): Promise<{ p50: number; p95: number; body: any }> {
  const { p50, p95, last } = await warmedUp(n, () => postOk(ds.server, '/api/v1/metrics/shopping', body));
  return { p50, p95, body: last };
}

/** Two prompts in five tagged TAG (through the command, once: the kept dataset may have them already). */
async function tagPrompts(ds: AnswerDataset): Promise<string[]> {
  const tagged = ds.site.ids.promptIds.filter((_, i) => i % 5 < 2);
  const db = ds.server.rt.database.db;
  const have = new Set<string>(await db('rm_prompts').whereRaw('? = any(tags)', [TAG]).pluck('id'));
  const ctx = { store: ds.server.rt.store, organizationId: ds.server.organizationId, actor: SYSTEM_ACTOR };
  for (const id of tagged) {
    if (have.has(id)) continue;
    const r = await updatePrompt(ctx, { website_id: ds.site.websiteId, prompt_id: id, tags: [TAG] });
    if (isDomainError(r)) throw new Error(r.message);
  }
  await caughtUp(ds.server.rt, await ds.server.rt.store.lastPosition());
  return tagged;
}

/** The website's shopping answers and their cards as plain tables in DuckDB. */
async function loadDuckDb(con: DuckDBConnection, ds: AnswerDataset) {
  const db = ds.server.rt.database.db;
  await con.run('create table answers (id integer, day integer, prompt varchar, model varchar, schedule varchar)');
  await con.run(`create table cards (answer integer, position integer, name varchar, brand varchar, merchant varchar, merchant_key varchar,
    price double, currency varchar, entity varchar, is_own boolean, product_key varchar)`);
  const ids = new Map<string, number>();
  const answers = await con.createAppender('answers');
  const rows: { id: string; run_at: Date; prompt_id: string; model: string; schedule_id: string | null }[] = await db('rm_responses')
    .where('website_id', ds.site.websiteId)
    .whereIn('model', [...SHOPPING_MODEL_IDS])
    .select('id', 'run_at', 'prompt_id', 'model', 'schedule_id');
  for (const r of rows) {
    const id = ids.size;
    ids.set(r.id, id);
    answers.appendInteger(id);
    answers.appendInteger(dayOf(r.run_at));
    answers.appendVarchar(r.prompt_id);
    answers.appendVarchar(r.model);
    answers.appendVarchar(r.schedule_id ?? 'default');
    answers.endRow();
  }
  answers.closeSync();
  const cards = await con.createAppender('cards');
  const str = (v: string | null) => (v === null ? cards.appendNull() : cards.appendVarchar(v));
  const cardRows: any[] = await db('rm_response_products')
    .where('website_id', ds.site.websiteId)
    .select('response_id', 'position', 'name', 'brand', 'merchant', 'merchant_key', 'price', 'currency', 'entity_id', 'is_own', 'product_key');
  for (const c of cardRows) {
    cards.appendInteger(ids.get(c.response_id)!);
    cards.appendInteger(c.position);
    cards.appendVarchar(c.name);
    str(c.brand);
    str(c.merchant);
    str(c.merchant_key);
    if (c.price === null) cards.appendNull();
    else cards.appendDouble(c.price);
    str(c.currency);
    str(c.entity_id);
    cards.appendBoolean(c.is_own);
    cards.appendVarchar(c.product_key);
    cards.endRow();
  }
  cards.closeSync();
  return { answers: rows.length, cards: cardRows.length };
}

interface DuckCase {
  first: number;
  last: number;
  prompts?: string[];
  competitors: string[];
  target?: string;
}

const list = (xs: readonly string[]) => (xs.length ? xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(', ') : 'null');

/** The blocks DuckDB computes over the same cards: summary and offers, positions, prices, merchants, entities, top products. */
function duckQueries(d: DuckCase): Record<string, string> {
  const where = [`schedule = 'default'`, `day between ${d.first} and ${d.last}`, `model in (${list(SHOPPING_MODEL_IDS)})`];
  if (d.prompts) where.push(`prompt in (${list(d.prompts)})`);
  const target = d.target
    ? `(regexp_matches(name, '${wholeWordPattern([d.target]).replace(/'/g, "''")}', 'i') or regexp_matches(coalesce(brand, ''), '${wholeWordPattern([d.target]).replace(/'/g, "''")}', 'i'))`
    : 'true';
  const base = `with a as (select id, day from answers where ${where.join(' and ')}),
    c as (select cards.*, a.day, case when is_own and ${target} then 'own' when not is_own and entity in (${list(d.competitors)}) then 'competitor' else 'other' end as side,
                 price is not null and currency is not null as priced
            from cards join a on a.id = cards.answer)`;
  return {
    summary: `${base} select (select count(*) from a), count(distinct answer), count(distinct answer) filter (where side = 'own'),
        count(distinct answer) filter (where side = 'competitor'), count(*), count(*) filter (where side = 'own'), count(*) filter (where side = 'competitor'),
        count(*) filter (where priced), count(distinct merchant_key), count(*) filter (where merchant_key is null),
        min(position) filter (where side = 'own') from c`,
    positions: `${base} select least(position, 10) as b, count(*), count(*) filter (where side = 'own'), count(*) filter (where side = 'competitor') from c group by b order by b`,
    prices: `${base} select currency, count(*), min(price), median(price), avg(price), max(price) from c where priced group by currency order by count(*) desc, currency`,
    merchants: `${base} select merchant_key, count(*), count(distinct answer) from c where merchant_key is not null group by merchant_key order by count(*) desc, merchant_key`,
    entities: `${base} select entity, count(*), count(distinct answer), min(position) from c where side <> 'other' group by entity`,
    top: `${base} select side, count(*) as n, count(distinct answer), min(position) from c where side <> 'other' group by side, entity, product_key
        qualify row_number() over (partition by side order by n desc, avg(position), product_key, entity) <= 10 order by side, n desc, avg(position), product_key, entity`,
    trend: `${base}, d as (select day, count(*) as n from a group by day) select d.day, d.n, count(distinct c.answer) from d left join c on c.day = d.day group by d.day, d.n order by d.day`,
  };
}

const r2 = (x: number) => Math.round((x + Number.EPSILON) * 100) / 100;

/** DuckDB's blocks against aivis's answer; throws on the first number that differs. */
function compare(label: string, duck: Record<string, unknown[][]>, got: any) {
  const fail = (what: string, a: unknown, b: unknown) => {
    throw new Error(`${label}: ${what} is ${JSON.stringify(a)} in aivis and ${JSON.stringify(b)} in DuckDB`);
  };
  const eq = (what: string, a: unknown, b: unknown) => {
    if (a !== (typeof a === 'number' && b !== null ? Number(b) : b)) fail(what, a, b);
  };
  const [s] = duck.summary;
  const sm = got.summary;
  const of = got.offer_summary;
  eq('answers', sm.answers, s[0]);
  eq('answers_with_products', sm.answers_with_products, s[1]);
  eq('answers_with_own_products', sm.answers_with_own_products, s[2]);
  eq('answers_with_competitor_products', sm.answers_with_competitor_products, s[3]);
  eq('cards', of.cards, s[4]);
  eq('own_cards', of.own_cards, s[5]);
  eq('competitor_cards', of.competitor_cards, s[6]);
  eq('priced_cards', of.priced_cards, s[7]);
  eq('merchants', of.merchants, s[8]);
  eq('cards_without_merchant', of.cards_without_merchant, s[9]);
  eq('best_own_position', sm.best_own_position, s[10]);
  for (const [b, cards, own, comp] of duck.positions) {
    const p = got.position_distribution[Number(b) - 1];
    eq(`position ${b} cards`, p.cards, cards);
    eq(`position ${b} own`, p.own_cards, own);
    eq(`position ${b} competitor`, p.competitor_cards, comp);
  }
  duck.prices.forEach(([currency, cards, min, med, avg, max], i) => {
    const p = got.offer_summary.price_ranges[i];
    eq(`price range ${i} currency`, p.currency, currency);
    eq(`${currency} cards`, p.cards, cards);
    eq(`${currency} min`, p.min_price, r2(Number(min)));
    eq(`${currency} median`, p.median_price, r2(Number(med)));
    eq(`${currency} max`, p.max_price, r2(Number(max)));
    // a float sum depends on the order it is taken in (either side's): at most a cent apart after rounding
    if (Math.abs(p.avg_price - r2(Number(avg))) > 0.0100001) fail(`${currency} avg`, p.avg_price, avg);
  });
  duck.merchants.forEach(([key, cards, answers], i) => {
    const m = got.merchant_breakdown[i];
    eq(`merchant ${i}`, m.merchant_key, key);
    eq(`merchant ${key} appearances`, m.appearances, cards);
    eq(`merchant ${key} answers`, m.answers, answers);
  });
  const byEntity = new Map(got.competitor_breakdown.map((e: any) => [e.entity_id, e]));
  for (const [entity, cards, answers, best] of duck.entities) {
    const e: any = byEntity.get(String(entity));
    if (!e) fail(`entity ${entity}`, undefined, cards);
    eq(`entity ${entity} appearances`, e.appearances, cards);
    eq(`entity ${entity} answers`, e.answers, answers);
    eq(`entity ${entity} best position`, e.best_position, best);
  }
  const tops = { own: got.top_own_products, competitor: got.top_competitor_products } as Record<string, any[]>;
  const rank: Record<string, number> = { own: 0, competitor: 0 };
  for (const [side, n, answers, best] of duck.top) {
    const i = rank[String(side)]++;
    const p = tops[String(side)][i];
    eq(`top ${side} ${i} appearances`, p?.appearances, n);
    eq(`top ${side} ${i} answers`, p.answers, answers);
    eq(`top ${side} ${i} best position`, p.best_position, best);
  }
  eq('trend days', got.trend.length, duck.trend.length);
  duck.trend.forEach(([day, n, withProducts], i) => {
    const t = got.trend[i];
    eq(`trend ${i} day`, t.date, dayName(Number(day)));
    eq(`trend ${t.date} answers`, t.answers, n);
    eq(`trend ${t.date} answers with products`, t.answers_with_products, withProducts);
  });
}

export const shopping = answersBench({
  name: 'shopping',
  about:
    'the nine blocks of POST /api/v1/metrics/shopping over 365 days of the answers dataset, unfiltered and filtered, and DuckDB over the same cards',
  async run({ ds, db, quick }) {
    const days: { first: string; last: string } = await db('rm_responses')
      .where('website_id', ds.site.websiteId)
      .first(db.raw(`min(run_at at time zone 'UTC')::date::text as first`), db.raw(`max(run_at at time zone 'UTC')::date::text as last`));
    const lastDay = Math.floor(Date.parse(`${days.last}T00:00:00Z`) / DAY_MS);
    const firstDay = Math.max(Math.floor(Date.parse(`${days.first}T00:00:00Z`) / DAY_MS), lastDay - 364);
    const tagged = await tagPrompts(ds);
    const entities = await trackedEntities(db, ds.site.websiteId);
    const competitors = entities.filter((e) => !e.is_self).map((e) => e.id);
    const chosen = competitors.filter((_, i) => i % 2 === 0).slice(0, 4);
    const range = { start_date: dayName(firstDay), end_date: dayName(lastDay) };
    const cases = [
      { name: 'unfiltered', filters: range, duck: { first: firstDay, last: lastDay, competitors }, goal: 100 },
      {
        name: 'filtered',
        filters: { ...range, competitor_ids: chosen, prompt_tags: [TAG], target_identifiers: [TARGET] },
        duck: { first: firstDay, last: lastDay, competitors: chosen, prompts: tagged, target: TARGET },
        goal: 150,
      },
    ];
    const n = quick ? 20 : 50;

    const t0 = nowNs();
    const first = await latency(ds, { website_id: ds.site.websiteId, filters: range }, 0);
    info(
      `shopping: the first request took ${(Number(nowNs() - t0) / 1e6).toFixed(0)} ms (${first.body.offer_summary.cards} cards of ${first.body.summary.answers} answers over ${lastDay - firstDay + 1} days)`,
    );

    await withDuckDb(async (con) => {
      const duck = await loadDuckDb(con, ds);
      info(`shopping: DuckDB ${duck.answers} answers of the shopping models and ${duck.cards} cards loaded from the read model`);
      for (const c of cases) {
        const body = { website_id: ds.site.websiteId, filters: c.filters };
        const cpu = await cpuMeter(db);
        const r = await latency(ds, body, n);
        const used = await cpu.stop();
        const qs = duckQueries(c.duck);
        const inDuck = await warmedUp(n, async () => {
          const rows: Record<string, unknown[][]> = {};
          for (const [k, q] of Object.entries(qs)) rows[k] = (await con.runAndReadAll(q)).getRows() as unknown[][];
          return rows;
        });
        compare(c.name, inDuck.last, r.body);
        const duckP50 = inDuck.p50;
        report(`shopping_ms_${c.name}_p50`, r.p50, 'ms', {
          note: `${r.body.offer_summary.cards} cards of ${r.body.summary.answers} answers; CPU ${((used.nodeUs + used.pgUs) / (n + 3) / 1000).toFixed(2)} ms per request (node ${(used.nodeUs / (n + 3) / 1000).toFixed(2)} + Postgres ${(used.pgUs / (n + 3) / 1000).toFixed(2)})`,
        });
        report(`shopping_ms_${c.name}_p95`, r.p95, 'ms', { goal: { op: '<=', value: c.goal } });
        report(`duckdb_shopping_ms_${c.name}`, duckP50, 'ms', {
          note: `p50 of ${n}: summary, offers, positions, prices, merchants, entities, top products and trend in DuckDB over the same cards (the same numbers as aivis, checked)`,
        });
        report(`shopping_vs_duckdb_ratio_${c.name}`, r.p50 / duckP50, 'x', {
          goal: { op: '<=', value: 0.5 },
          note: 'aivis p50 over HTTP (every block) / DuckDB p50 in process',
        });
      }
    });
  },
});
