import { beforeAll, describe, expect, it } from 'vitest';
import { AI_VALUE_NOT_ENABLED } from '../../src/app/ai-value';
import { MODEL_IDS } from '../../src/domain/models';
import { deterministicId } from '../../src/domain/ids';
import { jobStream } from '../../src/domain/jobs';
import { newEventsFor } from '../../commands/handle';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { computeValuation } from '../../queries/ai-value/compute';
import { NO_PUBLISHED_CONTENT } from '../../queries/ai-value/attribution';
import type { AiSearchValue } from '../../queries/ai-value/views';
import { aiValuePass } from '../../src/workers/ai-value';
import { call, caughtUp, type TestServer } from '../support/server';
import { tenancyChecks, UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';
import { jobEnded } from '../support/jobs';
import { postCreated } from '../support/http';

let s: TestServer;
let w: World;

const [M1, M2] = MODEL_IDS;
const DAY = 86_400_000;
const PATH = '/api/v1/ai-search-value';

const ago = (days: number, hours = 0) => new Date(Date.now() - days * DAY - hours * 3_600_000).toISOString();

const created = (path: string, body: unknown, key = w.a.key) => postCreated(s, key, path, body);

async function value(websiteId: string, key = w.a.key): Promise<AiSearchValue> {
  const r = await call(s, 'GET', PATH, { key, query: { website_id: websiteId } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Runs the scheduler's pass (as every instance does every 20 s) and waits for the jobs it requested. */
async function computeDue(): Promise<string[]> {
  const jobs = await aiValuePass({ db: s.rt.database.db, store: s.rt.store });
  for (const j of jobs) expect(await jobEnded(s.rt, j)).toBe('succeeded');
  await caughtUp(s, ['ai-value']);
  return jobs;
}

interface Fixture {
  site: string;
  t1: string;
  t2: string;
  p1: string;
  p2: string;
}

const answer = (prompt_id: string, model: string, run_at: string, text: string) => ({ prompt_id, model, run_at, text });
const times = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));

/**
 * The fixture of docs/VALUATION.md, section 8. Acme (acme.example.com) and its competitor Bolt; topic "CRM software"
 * (P1, non-branded, economics 1,000 x $5) and "Acme CRM reviews" (P2, branded, software defaults 2,000 x $4).
 *   W (the last 28 days): P1 m1: 10 "Acme, then Bolt", 5 "Bolt", 5 neither; P1 m2: 5 "Bolt, then Acme", 5 neither;
 *                         P2 m1: 16 Acme of 20; P2 m2: 6 Acme of 10.
 *   P (28 to 56 days ago): P1 m1: 10 "Acme" alone.
 */
async function buildFixture(key = w.a.key, name = 'Acme'): Promise<Fixture> {
  const site = (await created('/api/v1/websites', { name, url: 'https://acme.example.com' }, key)).website.id as string;
  await created('/api/v1/competitors', { website_id: site, name: 'Bolt', url: 'https://bolt.example.com' }, key);
  const t1 = (await created('/api/v1/topics', { website_id: site, name: 'CRM software' }, key)).topic.id as string;
  const t2 = (await created('/api/v1/topics', { website_id: site, name: 'Acme CRM reviews' }, key)).topic.id as string;
  const p1 = (await created('/api/v1/prompts', { website_id: site, topic_id: t1, text: 'Which CRM software is best for startups?' }, key)).prompt
    .id as string;
  const p2 = (await created('/api/v1/prompts', { website_id: site, topic_id: t2, text: 'Is Acme a good CRM?', type: 'branded' }, key)).prompt
    .id as string;
  const patch = await call(s, 'PATCH', `/api/v1/topics/${t1}`, {
    key,
    body: { website_id: site, economics: { monthly_searches: 1000, cpc_usd: 5 } },
  });
  expect(patch.status, JSON.stringify(patch.body)).toBe(200);
  expect(patch.body).toEqual({ topic: { id: t1, name: 'CRM software', economics: { monthly_searches: 1000, cpc_usd: 5 } } });
  const l1 = (await created('/api/v1/locations', { website_id: site, location: 'Paris, France', country: 'France' }, key)).id as string;
  const l2 = (await created('/api/v1/locations', { website_id: site, location: 'Lyon, France', country: 'France' }, key)).id as string;
  const persona = (await created('/api/v1/personas', { website_id: site, name: 'Founder' }, key)).persona.id as string;
  // where and for whom: the first ten answers of P1 on m1 come from two locations, three of them for one persona
  const placed = (i: number) => ({ location_id: i < 5 ? l1 : l2, ...(i < 3 ? { persona_id: persona } : {}) });
  const responses = [
    ...times(10, (i) => ({ ...answer(p1, M1, ago(1 + i), 'Acme is the pick here; Bolt is fine too.'), ...placed(i) })),
    ...times(5, (i) => answer(p1, M1, ago(2 + i, 3), 'Bolt leads this one.')),
    ...times(5, (i) => answer(p1, M1, ago(3 + i, 5), 'There is no clear answer.')),
    ...times(5, (i) => answer(p1, M2, ago(1 + i, 7), 'Bolt first, then Acme.')),
    ...times(5, (i) => answer(p1, M2, ago(4 + i, 2), 'Hard to say.')),
    ...times(16, (i) => answer(p2, M1, ago(1 + i, 1), 'Yes, Acme is good.')),
    ...times(4, (i) => answer(p2, M1, ago(2 + i, 9), 'It depends on your needs.')),
    ...times(6, (i) => answer(p2, M2, ago(1 + i, 4), 'Acme is solid.')),
    ...times(4, (i) => answer(p2, M2, ago(5 + i, 6), 'Many options exist.')),
    ...times(10, (i) => answer(p1, M1, ago(30 + i), 'Acme, clearly.')),
  ];
  const imported = await created('/api/v1/responses/import', { website_id: site, responses }, key);
  expect(imported.imported).toBe(70);
  return { site, t1, t2, p1, p2 };
}

let fx: Fixture;

useWorld(async (ctx) => {
  ({ s, w } = ctx);
  fx = await buildFixture();
});

describe('GET /api/v1/ai-search-value: the model on the fixture, reproduced by hand (docs/VALUATION.md, section 8)', () => {
  let before: AiSearchValue;
  let body: AiSearchValue;
  beforeAll(async () => {
    before = await value(fx.site);
    await computeDue();
    body = await value(fx.site);
  });

  it('given a website never computed, then a 200 that carries no value: computed_at null, gathering', () => {
    expect(before).toMatchObject({
      computed_at: null,
      has_computed_valuations: false,
      is_stale_value: false,
      market: { value_usd_mo: 0, topics_priced: 0, topics_total: 0 },
      topics: [],
      forecast: null,
    });
  });

  it('given 60 answers in 28 days, then it is computed, stamped and versioned', () => {
    expect(body.has_computed_valuations).toBe(true);
    expect(body.is_stale_value).toBe(false);
    expect(Date.now() - Date.parse(body.computed_at!)).toBeLessThan(60_000);
    expect(body.assumptions_version).toMatch(/^\d{4}\.\d{2}$/);
    expect(body.measured_responses).toBe(60);
    expect(body.forecast).toBeNull();
  });

  it('given the non-branded topic, then its shares, standard error, drift and bands are the hand-computed ones', () => {
    const t = body.topics.find((x) => x.topic_id === fx.t1)!;
    expect(t).toMatchObject({
      name: 'CRM software',
      category: 'software',
      local_intent: false,
      branded: false,
      share_basis: 'pw_sov',
      economics_source: 'topic',
      value_usd_mo: 5000,
      pw_sov_pct: 45.4545,
      mix_adjusted_share_pct: 41.6667,
      mention_rate_pct: 50,
      drift_pp: -58.3333,
      standard_error_pp: 8.2555,
      responses_28d: 30,
      models_measured: 2,
      personas_measured: 1,
      locations_measured: 2,
      counted_in_total: true,
    });
    expect(t.captured).toEqual({ conservative: 1274.29, expected: 2083.33, upside: 2892.38 });
    expect(t.headroom).toEqual({ conservative: 2107.62, expected: 2916.67, upside: 3725.71 });
  });

  it('given the branded topic, then it is priced from its category and valued on its mention rate', () => {
    const t = body.topics.find((x) => x.topic_id === fx.t2)!;
    expect(t).toMatchObject({
      category: 'software',
      branded: true,
      share_basis: 'mention_rate',
      economics_source: 'category',
      value_usd_mo: 8000,
      mix_adjusted_share_pct: 70,
      mention_rate_pct: 73.3333,
      standard_error_pp: 7.9538,
      drift_pp: null,
      responses_28d: 30,
      personas_measured: 0,
      locations_measured: 0,
    });
    expect(t.captured).toEqual({ conservative: 4352.84, expected: 5600, upside: 6847.16 });
    expect(t.headroom).toEqual({ conservative: 1152.84, expected: 2400, upside: 3647.16 });
  });

  it('given both topics, then the totals are their sums and current_sov_pct reads the non-branded topic only', () => {
    expect(body.market).toEqual({ value_usd_mo: 13000, topics_priced: 2, topics_total: 2, coverage_pct: 100, current_sov_pct: 45.4545 });
    expect(body.captured).toEqual({ conservative: 5627.13, expected: 7683.33, upside: 9739.54 });
    expect(body.headroom).toEqual({ conservative: 3260.46, expected: 5316.67, upside: 7372.87 });
    expect(body.merge_suggestions).toEqual([]);
  });

  it('given the share-of-voice metric of the same website, then current_sov_pct reads lower, as the spec says by design', async () => {
    const r = await call(s, 'POST', '/api/v1/metrics/share-of-voice/cumulative', { key: w.a.key, body: { website_id: fx.site, filters: {} } });
    expect(r.status).toBe(200);
    // Acme in 47 answers, Bolt in 20: 70.1% against 45.5% position-weighted over the non-branded topic
    expect(r.body.data.Acme.share_of_voice).toBeCloseTo((100 * 47) / 67, 3);
    expect(body.market.current_sov_pct).toBeLessThan(r.body.data.Acme.share_of_voice);
  });

  it('given no published page of its own, then contribution is unavailable with its reason and never added to captured', () => {
    expect(body.contribution).toEqual({
      modeled_attributed: { conservative: 0, expected: 0, upside: 0 },
      attributed_share: 0,
      attribution_unavailable: true,
      unavailable_reason: NO_PUBLISHED_CONTENT,
    });
  });

  it('given nothing changed, then a second pass requests nothing (debounced) and the figure stays', async () => {
    expect(await computeDue()).toEqual([]);
    expect((await value(fx.site)).computed_at).toBe(body.computed_at);
  });
});

describe("contribution: answers citing the brand's published content (docs/VALUATION.md, section 6)", () => {
  it('given a tracked page of its own cited by 20 of the 50 answers mentioning the brand, then 40% of captured, never added to it', async () => {
    const site = (await created('/api/v1/websites', { name: 'Attrib', url: 'https://attrib.example.com' })).website.id as string;
    await created('/api/v1/competitors', { website_id: site, name: 'Bolt', url: 'https://bolt.example.com' });
    const topic = (await created('/api/v1/topics', { website_id: site, name: 'CRM software' })).topic.id as string;
    const p = (await created('/api/v1/prompts', { website_id: site, topic_id: topic, text: 'Best CRM software?' })).prompt.id as string;
    const track = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: site, urls: [{ url: 'https://attrib.example.com/blog/crm' }, { url: 'https://bolt.example.com/page' }] },
    });
    expect(track.status, JSON.stringify(track.body)).toBe(200);
    const cited = (text: string, urls: string[]) => (i: number) => ({ ...answer(p, M1, ago(1, i / 2), text), citations: urls });
    await created('/api/v1/responses/import', {
      website_id: site,
      responses: [
        ...times(20, cited('Attrib is great.', ['https://attrib.example.com/blog/crm?utm_source=ai'])),
        ...times(20, cited('Attrib is fine.', [])),
        ...times(10, cited('Bolt wins.', ['https://bolt.example.com/page'])),
        ...times(10, cited('Attrib and Bolt.', ['https://www.bolt.example.com/page'])),
      ],
    });
    await caughtUp(s, ['content']);
    await computeDue();
    const v = await value(site);
    expect(v.contribution.attribution_unavailable).toBe(false);
    expect(v.contribution.unavailable_reason).toBeNull();
    expect(v.contribution.attributed_share).toBe(0.4);
    const c = v.captured;
    expect(v.contribution.modeled_attributed).toEqual({
      conservative: Math.round(c.conservative * 40) / 100,
      expected: Math.round(c.expected * 40) / 100,
      upside: Math.round(c.upside * 40) / 100,
    });
    // captured is the topics' own sum: the contribution is a part of it, not added on top
    expect(c.expected).toBe(v.topics[0].captured.expected);
  });
});

describe('PATCH /api/v1/topics/{id}: economics', () => {
  it('given economics null, then the value is computed again with the category default, once', async () => {
    const site = (await buildFixture(w.a.key, 'Acme economics')).site;
    await computeDue();
    const topics = (await value(site)).topics;
    const t1 = topics.find((t) => t.name === 'CRM software')!;
    expect(t1.value_usd_mo).toBe(5000);
    const r = await call(s, 'PATCH', `/api/v1/topics/${t1.topic_id}`, { key: w.a.key, body: { website_id: site, economics: null } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.topic.economics).toBeNull();
    // both the change and the new figure are in the activity feed
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, entity_type: 'topic' } });
    expect(feed.body.data[0]).toMatchObject({ entity_type: 'topic', change_type: 'updated', entity_ids: [t1.topic_id], via_api_key: true });
    expect(await computeDue()).toHaveLength(1);
    await caughtUp(s, ['activity']);
    const computed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, entity_type: 'ai_search_value' } });
    expect(computed.body.data.map((e: { change_type: string }) => e.change_type)).toEqual(['computed', 'computed']);
    const after = (await value(site)).topics.find((t) => t.topic_id === t1.topic_id)!;
    expect(after).toMatchObject({ economics_source: 'category', value_usd_mo: 8000 });
    expect(await computeDue()).toEqual([]);
  });

  it('given bad input, then 400 naming the field and nothing written; an unknown topic is a 404', async () => {
    const cases: [unknown, number, RegExp][] = [
      [{ website_id: fx.site, economics: { monthly_searches: -1, cpc_usd: 1 } }, 400, /economics\.monthly_searches/],
      [{ website_id: fx.site, economics: { monthly_searches: 10, cpc_usd: 'x' } }, 400, /economics\.cpc_usd/],
      [{ website_id: fx.site, economics: { monthly_searches: 10, cpc_usd: 1, extra: 1 } }, 400, /extra/],
      [{ website_id: fx.site }, 400, /economics/],
    ];
    for (const [body, status, error] of cases) {
      const head = await s.head();
      const r = await call(s, 'PATCH', `/api/v1/topics/${fx.t1}`, { key: w.a.key, body });
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      expect(r.body.error).toMatch(error);
      expect(await s.head()).toBe(head);
    }
    const r = await call(s, 'PATCH', `/api/v1/topics/${UNKNOWN_ID}`, { key: w.a.key, body: { website_id: fx.site, economics: null } });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('Topic not found');
  });

  it("given another organization's key, then 403 and nothing written", async () => {
    const head = await s.head();
    const r = await call(s, 'PATCH', `/api/v1/topics/${fx.t1}`, { key: w.b.key, body: { website_id: fx.site, economics: null } });
    expect(r.status).toBe(403);
    expect(await s.head()).toBe(head);
  });
});

/**
 * A website named `name` (at https://<name>.example.com) with one topic and one prompt under it, and `answers` answers
 * of M1 to that prompt `daysAgo` days ago (four an hour), each saying `text`: its id.
 */
async function answeredSite(name: string, o: { answers: number; daysAgo: number; text: string; topic?: string; prompt?: string }): Promise<string> {
  const site = (await created('/api/v1/websites', { name, url: `https://${name.toLowerCase()}.example.com` })).website.id as string;
  const topic = (await created('/api/v1/topics', { website_id: site, name: o.topic ?? 'CRM tools' })).topic.id as string;
  const p = (await created('/api/v1/prompts', { website_id: site, topic_id: topic, text: o.prompt ?? 'Best CRM?' })).prompt.id as string;
  await created('/api/v1/responses/import', { website_id: site, responses: times(o.answers, (i) => answer(p, M1, ago(o.daysAgo, i / 4), o.text)) });
  return site;
}

describe('GET /api/v1/ai-search-value: the states of a 200', () => {
  it('given under 50 answers, then gathering: checked (computed_at set) but no valuation', async () => {
    const site = await answeredSite('Small', { answers: 49, daysAgo: 1, text: 'Small is fine.' });
    await computeDue();
    const v = await value(site);
    expect(v.has_computed_valuations).toBe(false);
    expect(v.computed_at).not.toBeNull();
    expect(v.measured_responses).toBe(49);
    expect(v.market.value_usd_mo).toBe(0);
    expect(v.topics).toEqual([]);
  });

  it('given two passes at once (two instances), then one job computes the website once', async () => {
    const site = await answeredSite('Twice', { answers: 50, daysAgo: 1, text: 'Twice.' });
    const deps = { db: s.rt.database.db, store: s.rt.store };
    const [x, y] = await Promise.all([aiValuePass(deps), aiValuePass(deps)]);
    const jobs = [...x, ...y];
    expect(new Set(jobs).size).toBe(jobs.length);
    for (const j of jobs) expect(await jobEnded(s.rt, j)).toBe('succeeded');
    await caughtUp(s, ['activity', 'ai-value']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, entity_type: 'ai_search_value' } });
    expect(feed.body.data).toHaveLength(1);
    expect((await value(site)).has_computed_valuations).toBe(true);
  });

  it('given only unpriced topics, then a computed value with market 0 and no bands', async () => {
    const site = await answeredSite('Quux', { answers: 50, daysAgo: 2, text: 'Quux it is.', topic: 'Zorblat', prompt: 'Which zorblat is best?' });
    await computeDue();
    const v = await value(site);
    expect(v.has_computed_valuations).toBe(true);
    expect(v.market).toEqual({ value_usd_mo: 0, topics_priced: 0, topics_total: 1, coverage_pct: 0, current_sov_pct: 0 });
    expect(v.captured).toEqual({ conservative: 0, expected: 0, upside: 0 });
    expect(v.topics[0]).toMatchObject({ category: 'general', economics_source: 'none', value_usd_mo: 0, mention_rate_pct: 100 });
  });

  /** A website priced once from answers 29 days old, its figure computed `daysAgo` days ago, then checked now. */
  async function oncePriced(name: string, daysAgo: number) {
    const site = await answeredSite(name, { answers: 60, daysAgo: 29, text: `${name} leads.`, topic: 'CRM software' });
    // the figure a job computed then (the job's step, with the clock of that day)
    const then = new Date(Date.now() - daysAgo * DAY);
    const c = await computeValuation(s.rt.database.db, site, then);
    expect(c.valuation).not.toBeNull();
    const jobId = deterministicId('aivalue-test', site);
    await s.rt.store.append(
      jobStream('aivalue', jobId),
      newEventsFor({ store: s.rt.store, organizationId: w.a.organization_id, websiteId: site, actor: SYSTEM_ACTOR }, [
        { type: 'AiValueComputed', data: { job_id: jobId, website_id: site, ...c } },
      ]),
      'no_stream',
    );
    await caughtUp(s, ['ai-value']);
    await computeDue();
    return { site, then, old: c };
  }

  it('given a once-priced website below 50 answers with a figure 8 days old, then stale: the last figure, flagged', async () => {
    const { site, then, old } = await oncePriced('Stale', 8);
    const v = await value(site);
    expect(v.has_computed_valuations).toBe(true);
    expect(v.is_stale_value).toBe(true);
    expect(v.computed_at).toBe(then.toISOString());
    expect(v.market).toEqual(old.valuation!.market);
    expect(v.market.value_usd_mo).toBe(8000);
    expect(v.measured_responses).toBe(0);
  });

  it('given a once-priced website below 50 answers with a figure 3 days old, then the last figure, not stale yet', async () => {
    const { site } = await oncePriced('Recent', 3);
    const v = await value(site);
    expect(v.has_computed_valuations).toBe(true);
    expect(v.is_stale_value).toBe(false);
    expect(v.measured_responses).toBe(0);
  });

  it('given an organization without the feature, then 403 with the feature message, on REST and MCP', async () => {
    const plain = await s.org('No value', { features: ['pitch'] });
    const site = (await created('/api/v1/websites', { name: 'Plain', url: 'https://plain.example.com' }, plain.key)).website.id as string;
    const r = await call(s, 'GET', PATH, { key: plain.key, query: { website_id: site } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: AI_VALUE_NOT_ENABLED });
    const jobs = await aiValuePass({ db: s.rt.database.db, store: s.rt.store });
    const row = await s.rt.database.db('rm_ai_values').where('website_id', site).first();
    expect(row).toBeUndefined();
    for (const j of jobs) await jobEnded(s.rt, j);
  });

  it('given a paused website, then 403 and no computation requested for it; resumed, its figure is back', async () => {
    const site = await answeredSite('Paused', { answers: 50, daysAgo: 1, text: 'Paused.' });
    const pause = await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } });
    expect(pause.status, JSON.stringify(pause.body)).toBe(200);
    await computeDue();
    expect(await s.rt.database.db('rm_ai_values').where('website_id', site).first()).toBeUndefined();
    const r = await call(s, 'GET', PATH, { key: w.a.key, query: { website_id: site } });
    expect(r.status).toBe(403);
    expect((await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'active' } })).status).toBe(200);
    await computeDue();
    expect((await value(site)).has_computed_valuations).toBe(true);
  });

  it("given a key scoped to a website, then it reads that website's value (gathering: no answers yet)", async () => {
    const v = await value(w.a.a2, w.a.scoped);
    expect(v).toMatchObject({ website_id: w.a.a2, has_computed_valuations: false, computed_at: null, measured_responses: 0 });
  });

  it('given bad input, then 400 naming website_id; an unknown website 404', async () => {
    const missing = await call(s, 'GET', PATH, { key: w.a.key });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/website_id/);
    const bad = await call(s, 'GET', PATH, { key: w.a.key, query: { website_id: 'nope' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/website_id/);
    const unknown = await call(s, 'GET', PATH, { key: w.a.key, query: { website_id: UNKNOWN_ID } });
    expect(unknown.status).toBe(404);
  });
});

websiteTenancyChecks(() => w, 'GET', PATH);

tenancyChecks('PATCH /api/v1/topics/{id} (economics)', () => w, {
  method: 'PATCH',
  websiteScoped: true,
  request: (websiteId) => ({ path: `/api/v1/topics/${UNKNOWN_ID}`, body: { website_id: websiteId, economics: null } }),
});

describe('the OpenAPI document', () => {
  it("given the document, then GET /api/v1/ai-search-value is in it as the spec's (no extension tag) and the topics' economics PATCH as an extension", async () => {
    const r = await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key });
    expect(r.status).toBe(200);
    const get = r.body.paths['/api/v1/ai-search-value']?.get;
    expect(get?.tags).not.toContain('extension');
    expect(get.parameters.map((p: { name: string }) => p.name)).toEqual(['website_id']);
    expect(Object.keys(get.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['assumptions_version', 'computed_at', 'has_computed_valuations', 'is_stale_value', 'market', 'captured', 'headroom']),
    );
    expect(r.body.paths['/api/v1/topics/{topic_id}']?.patch?.tags).toContain('extension');
  });
});
