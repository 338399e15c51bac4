import { describe, expect, it } from 'vitest';
import { buildSite, type Site } from '../support/answers';
import { until } from '../support/until';
import { call, caughtUp, type TestServer, sharedServer } from '../support/server';
import { UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
let site: Site;
let S1: string;
const ids: Record<string, string> = {};

/**
 * Seven answers whose mentions, positions and citations are known by construction (brand Acme, competitors Globex
 * and Initech; prompts p1 active, p2 active branded, p3 paused; locations L1, L2; schedule S1):
 *   1 d1 p1 chatgpt L1  Acme 1, Globex 2; cites Acme
 *   2 d1 p1 claude  L1  Globex 1; cites Globex
 *   3 d1 p2 chatgpt L2  nobody
 *   4 d2 p1 chatgpt L2  Initech 1, Acme 2
 *   5 d2 p3 gemini  L1  Acme 1
 *   6 d3 p2 claude  --  Globex 1, Initech 2, Acme 3; cites Initech
 *   7 d3 p1 chatgpt L1  S1: Acme 1
 */
useWorld(async (ctx) => {
  ({ s, w } = ctx);
  site = await buildSite(s, w.a.key, {
    name: 'Acme',
    url: 'https://acme-m.example.com',
    competitors: [
      { name: 'Globex', url: 'https://globex-m.example.net' },
      { name: 'Initech', url: 'https://initech-m.example.org' },
    ],
    prompts: [{ text: 'p1' }, { text: 'p2', type: 'branded' }, { text: 'p3', status: 'paused' }],
    locations: [
      { location: 'L1', country: 'France' },
      { location: 'L2', country: 'Spain' },
    ],
  });
  S1 = (
    await call(s, 'POST', '/api/v1/prompt-schedules', {
      key: w.a.key,
      body: { website_id: site.id, name: 'S1', models: ['chatgpt'], frequency: 'daily' },
    })
  ).body.schedule.id;
  const [p1, p2, p3] = site.prompts.map((p) => p.id);
  const [L1, L2] = site.locations.map((l) => l.id);
  Object.assign(ids, { p1, p2, p3, L1, L2, globex: site.competitors[0].id, initech: site.competitors[1].id });
  const a = (
    run_at: string,
    prompt_id: string,
    model: string,
    location_id: string | null,
    text: string,
    citations: string[] = [],
    extra: object = {},
  ) => ({
    prompt_id,
    model,
    run_at,
    text,
    citations,
    location_id,
    ...extra,
  });
  const r = await call(s, 'POST', '/api/v1/responses/import', {
    key: w.a.key,
    body: {
      website_id: site.id,
      responses: [
        a('2026-03-01T08:00:00Z', p1, 'chatgpt', L1, 'Acme is good, Globex too.', ['https://acme-m.example.com/pricing']),
        a('2026-03-01T09:00:00Z', p1, 'claude', L1, 'Globex only.', ['https://www.globex-m.example.net/']),
        a('2026-03-01T10:00:00Z', p2, 'chatgpt', L2, 'Nothing to see.'),
        a('2026-03-02T08:00:00Z', p1, 'chatgpt', L2, 'Initech first, then Acme.'),
        a('2026-03-02T20:00:00Z', p3, 'gemini', L1, 'Acme.'),
        a('2026-03-03T08:00:00Z', p2, 'claude', null, 'Globex, Initech and Acme.', ['https://blog.initech-m.example.org/x']),
        a('2026-03-03T09:00:00Z', p1, 'chatgpt', L1, 'Acme alone.', [], { schedule_id: S1 }),
      ],
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}, sharedServer);

const metric = (family: string, filters?: object, kind = 'cumulative', key = w.a.key) =>
  call(s, 'POST', `/api/v1/metrics/${family}/${kind}`, { key, body: { website_id: site.id, ...(filters && { filters }) } });

/** The family's value field of each brand. */
async function values(family: string, field: string, filters?: object) {
  const r = await metric(family, filters);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return Object.fromEntries(Object.entries(r.body.data as Record<string, Record<string, unknown>>).map(([k, v]) => [k, v[field]]));
}

describe('cumulative metrics', () => {
  it('given the default selection (answers 1-6), then each family has one value per brand as defined', async () => {
    const mr = await metric('mention-rate');
    expect(mr.body.data.Acme).toEqual({
      mention_rate: 66.6667,
      relative_mention_rate: 80,
      is_self: true,
      sample: {
        mention_rate: { numerator: 4, denominator: 6, ci95: [expect.closeTo(30.0, 1), expect.closeTo(90.32, 1)] },
        relative_mention_rate: { numerator: 4, denominator: 5, ci95: expect.any(Array) },
      },
    });
    expect(mr.body.data.Globex).toMatchObject({ mention_rate: 50, relative_mention_rate: 60, is_self: false });
    expect(mr.body.data.Initech).toMatchObject({ mention_rate: 33.3333, relative_mention_rate: 40, is_self: false });
    expect(mr.body).toMatchObject({ schedule: 'default', responses: 6 });
    expect(await values('share-of-voice', 'share_of_voice')).toEqual({ Acme: 44.4444, Globex: 33.3333, Initech: 22.2222 });
    expect(await values('citation-rate', 'citation_rate')).toEqual({ Acme: 16.6667, Globex: 16.6667, Initech: 16.6667 });
    expect(await values('position', 'avg_position')).toEqual({ Acme: 1.75, Globex: 1.3333, Initech: 1.5 });
  });

  it('given each filter, then exactly its answers count', async () => {
    const rate = (filters: object) => values('mention-rate', 'mention_rate', filters);
    // prompt_status active: answer 5 (paused prompt) leaves
    expect(await rate({ prompt_status: 'active' })).toEqual({ Acme: 60, Globex: 60, Initech: 40 });
    expect(await rate({ prompt_type: 'branded' })).toEqual({ Acme: 50, Globex: 50, Initech: 50 });
    expect(await rate({ prompt_ids: [ids.p1] })).toEqual({ Acme: 66.6667, Globex: 66.6667, Initech: 33.3333 });
    expect(await rate({ models: ['chatgpt'] })).toEqual({ Acme: 66.6667, Globex: 33.3333, Initech: 33.3333 });
    expect(await rate({ location_ids: [ids.L1] })).toEqual({ Acme: 66.6667, Globex: 66.6667, Initech: 0 });
    expect(await rate({ start_date: '2026-03-02', end_date: '2026-03-02' })).toEqual({ Acme: 100, Globex: 0, Initech: 50 });
    expect(await rate({ start_date: '2026-03-02T12:00:00Z', end_date: '2026-03-03T08:00:00Z' })).toEqual({ Acme: 100, Globex: 50, Initech: 50 });
    expect(await rate({ schedule_id: S1 })).toEqual({ Acme: 100, Globex: 0, Initech: 0 });
    expect(await rate({ schedule_id: 'manual' })).toEqual(await rate({}));
    // a range without answers: rates of an empty set are 0, positions null
    expect(await rate({ start_date: '2027-01-01' })).toEqual({ Acme: 0, Globex: 0, Initech: 0 });
    expect(await values('position', 'avg_position', { start_date: '2027-01-01' })).toEqual({ Acme: null, Globex: null, Initech: null });
  });

  it('given competitor_ids, then only those competitors are listed and the brand relative rate is over them', async () => {
    const r = await metric('mention-rate', { competitor_ids: [ids.initech] });
    expect(Object.keys(r.body.data)).toEqual(['Acme', 'Initech']);
    expect(r.body.data.Acme).toMatchObject({ mention_rate: 66.6667, relative_mention_rate: 100 });
    expect(r.body.data.Initech).toMatchObject({ relative_mention_rate: 50 });
    // positions are never renumbered for a subset
    expect(await values('position', 'avg_position', { competitor_ids: [ids.initech] })).toEqual({ Acme: 1.75, Initech: 1.5 });
    expect(await values('share-of-voice', 'share_of_voice', { competitor_ids: [ids.initech] })).toEqual({ Acme: 66.6667, Initech: 33.3333 });
  });

  it('given bad filters, then 400 naming the field; another website or view, then 403/404', async () => {
    const bad = async (filters: object, error: string | RegExp, status = 400) => {
      const r = await metric('mention-rate', filters);
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      if (typeof error === 'string') expect(r.body.error).toBe(error);
      else expect(r.body.error).toMatch(error);
    };
    await bad({ models: ['gpt-9'] }, /^filters\.models\[0\]: unknown model "gpt-9"/);
    await bad({ start_date: 'yesterday' }, /^filters\.start_date: invalid date/);
    await bad({ start_date: '2026-03-03', end_date: '2026-03-01' }, /^filters\.end_date: is before start_date/);
    await bad({ schedule_id: 'all' }, "filters.schedule_id: must be 'default' or a schedule id (UUID)");
    await bad({ schedule_id: UNKNOWN_ID }, 'filters.schedule_id: no schedule of this website has this id');
    await bad({ competitor_ids: [UNKNOWN_ID] }, 'filters.competitor_ids[0]: no competitor of this website has this id');
    await bad({ location_ids: [UNKNOWN_ID] }, 'filters.location_ids[0]: no location of this website has this id');
    await bad({ prompt_status: 'archived' }, "filters.prompt_status: must be 'active' or 'paused'");
    await bad({ sentiment: 'positive' }, 'filters.sentiment is not allowed');
    await bad({ saved_view_id: UNKNOWN_ID }, 'Saved view not found', 404);
    const r = await call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', { key: w.a.key, body: { filters: {} } });
    expect(r).toMatchObject({ status: 400, body: { error: 'website_id is required' } });
  });
});

describe('saved views', () => {
  const view = async (filters: object) => {
    const r = await call(s, 'POST', '/api/v1/saved-views', { key: w.a.key, body: { website_id: site.id, name: `v${Math.random()}`, filters } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.view.id as string;
  };

  it('given a view, then it counts active prompts only and every model unless it says otherwise', async () => {
    const v = await view({});
    expect(await values('mention-rate', 'mention_rate', { saved_view_id: v })).toEqual(
      await values('mention-rate', 'mention_rate', { prompt_status: 'active' }),
    );
    const paused = await view({ prompt_status: 'paused' });
    expect(await values('mention-rate', 'mention_rate', { saved_view_id: paused })).toEqual({ Acme: 100, Globex: 0, Initech: 0 });
    // without a view the API defaults count paused prompts
    expect((await metric('mention-rate')).body.responses).toBe(6);
  });

  it("given a filter sent next to the view, then it replaces the view's value; the request's dates win over the view's range", async () => {
    const v = await view({ models: ['claude'], start_date: '2026-03-03', end_date: '2026-03-03' });
    expect((await metric('mention-rate', { saved_view_id: v })).body.responses).toBe(1); // answer 6
    expect((await metric('mention-rate', { saved_view_id: v, models: ['chatgpt'] })).body.responses).toBe(0);
    expect((await metric('mention-rate', { saved_view_id: v, start_date: '2026-03-01', end_date: '2026-03-03' })).body.responses).toBe(2); // 2 and 6
  });

  it("given the view's competitor list, then the brand's relative rate follows it; other pages' filters change nothing", async () => {
    const all = await view({ sentiment: 'negative', source_tags: ['press'] });
    const initech = await view({ competitor_ids: [ids.initech], sentiment: 'negative' });
    const a = (await metric('mention-rate', { saved_view_id: all })).body.data;
    const b = (await metric('mention-rate', { saved_view_id: initech })).body.data;
    // active prompts: answers 1,2,3,4,6; any of {Acme, Globex, Initech}: 1,2,4,6; of {Acme, Initech}: 1,4,6
    expect(a.Acme).toMatchObject({ mention_rate: 60, relative_mention_rate: 75 });
    expect(b.Acme).toMatchObject({ mention_rate: 60, relative_mention_rate: 100 });
    expect(Object.keys(b)).toEqual(['Acme', 'Initech']);
    // the same view on every family and on the time series
    for (const family of ['share-of-voice', 'citation-rate', 'position']) {
      expect((await metric(family, { saved_view_id: initech })).status).toBe(200);
      expect((await metric(family, { saved_view_id: initech }, 'time-series')).status).toBe(200);
    }
  });

  it('given a view with a filter the API cannot reproduce, then 400 naming it unless the request replaces it; a view of another website is 404', async () => {
    const v = await view({ models_not: ['gemini'] });
    const r = await metric('mention-rate', { saved_view_id: v });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('models_not');
    expect((await metric('position', { saved_view_id: v }, 'time-series')).status).toBe(400);
    expect((await metric('mention-rate', { saved_view_id: v, models: ['chatgpt', 'claude'] })).status).toBe(200);
    const other = await buildSite(s, w.a.key);
    const foreign = (await call(s, 'POST', '/api/v1/saved-views', { key: w.a.key, body: { website_id: other.id, name: 'x', filters: {} } })).body.view
      .id;
    expect(await metric('mention-rate', { saved_view_id: foreign })).toMatchObject({ status: 404, body: { error: 'Saved view not found' } });
  });
});

describe('time series', () => {
  it('given the default selection, then one row per UTC day with answers, oldest first, each with every brand', async () => {
    const r = await metric('mention-rate', undefined, 'time-series');
    expect(r.status).toBe(200);
    expect(r.body.data.map((row: { date: string; responses: number }) => [row.date, row.responses])).toEqual([
      ['2026-03-01', 3],
      ['2026-03-02', 2],
      ['2026-03-03', 1],
    ]);
    expect(r.body.data[0]).toMatchObject({
      schedule: 'default',
      metrics: { Acme: { mention_rate: 33.3333, is_self: true }, Globex: { mention_rate: 66.6667 } },
    });
    const pos = await metric('position', { start_date: '2026-03-02T00:00:00Z', end_date: '2026-03-03T23:59:59Z' }, 'time-series');
    expect(pos.body.data.map((row: { metrics: { Acme: { avg_position: number } } }) => row.metrics.Acme.avg_position)).toEqual([1.5, 3]);
  });
});

describe('reporting connector', () => {
  it('given the default selection, then one row per day, model, prompt, location and brand; counts are answers', async () => {
    const r = await call(s, 'POST', '/api/v1/looker-studio/data', {
      key: w.a.key,
      body: { website_id: site.id, filters: { schedule_id: 'default' } },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // six answers in six groups, three brands each
    expect(r.body.rows).toHaveLength(18);
    const first = r.body.rows.filter(
      (x: { date: string; model: string; prompt_id: string }) => x.date === '2026-03-01' && x.model === 'chatgpt' && x.prompt_id === ids.p1,
    );
    // the group's columns (and its schedule), then each brand's
    const group = { date: '2026-03-01', model: 'chatgpt', prompt_id: ids.p1, prompt: 'p1', location_id: ids.L1, location: 'L1', schedule: 'default' };
    expect(first).toEqual([
      { ...group, entity_id: site.id, entity: 'Acme', is_self: true, responses: 1, mentions: 1, citations: 1, position: 1 },
      { ...group, entity_id: ids.globex, entity: 'Globex', is_self: false, responses: 1, mentions: 1, citations: 0, position: 2 },
      { ...group, entity_id: ids.initech, entity: 'Initech', is_self: false, responses: 1, mentions: 0, citations: 0, position: null },
    ]);
    const paged = await call(s, 'POST', '/api/v1/looker-studio/data', { key: w.a.key, body: { website_id: site.id, page_size: 10, page_num: 1 } });
    expect(paged.body).toMatchObject({ page_num: 1, page_size: 10, has_more: false });
    expect(paged.body.rows).toEqual(r.body.rows.slice(10));
    const scheduled = await call(s, 'POST', '/api/v1/looker-studio/data', {
      key: w.a.key,
      body: { website_id: site.id, filters: { schedule_id: S1 } },
    });
    expect(scheduled.body.rows.map((x: { schedule: string }) => x.schedule)).toEqual([S1, S1, S1]);
  });
});

describe('freshness', () => {
  it('given answers imported or re-derived after a read, then the next read counts them at once', async () => {
    const other = await buildSite(s, w.a.key, {
      name: 'Fresh',
      url: 'https://fresh-m.example.com',
      competitors: [{ name: 'Rival', url: 'https://rival-m.example.net' }],
    });
    const m = (filters?: object) =>
      call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', { key: w.a.key, body: { website_id: other.id, ...(filters && { filters }) } });
    // a competitor's add answers before the answers read model re-derives (by design, see catalog.test.ts): its column
    // comes moments later
    await until('the new competitor in the metrics', async () => (await m()).body.data.Rival !== undefined, 5000, 20);
    expect((await m()).body).toMatchObject({ responses: 0, data: { Fresh: { mention_rate: 0 }, Rival: { mention_rate: 0 } } });
    const imp = (day: string, text: string) =>
      call(s, 'POST', '/api/v1/responses/import', {
        key: w.a.key,
        body: { website_id: other.id, responses: [{ prompt_id: other.prompts[0].id, model: 'chatgpt', run_at: `${day}T10:00:00Z`, text }] },
      });
    await imp('2026-04-01', 'Fresh and Newco.');
    expect((await m()).body.data).toMatchObject({ Fresh: { mention_rate: 100 }, Rival: { mention_rate: 0 } });
    await imp('2026-04-01', 'Rival.');
    await imp('2026-04-02', 'Rival again.');
    expect((await m()).body.data).toMatchObject({ Fresh: { mention_rate: 33.3333 }, Rival: { mention_rate: 66.6667 } });
    // a competitor added: the history is re-derived (the add does not wait for it) and the next read has it
    const added = await call(s, 'POST', '/api/v1/competitors', {
      key: w.a.key,
      body: { website_id: other.id, name: 'Newco', url: 'https://newco-m.example.org' },
    });
    expect(added.status).toBe(201);
    await caughtUp(s, ['answers']);
    expect((await m()).body.data).toMatchObject({
      Fresh: { mention_rate: 33.3333 },
      Rival: { mention_rate: 66.6667 },
      Newco: { mention_rate: 33.3333, relative_mention_rate: 33.3333 },
    });
    const pos = await call(s, 'POST', '/api/v1/metrics/position/cumulative', { key: w.a.key, body: { website_id: other.id } });
    expect(pos.body.data).toMatchObject({ Fresh: { avg_position: 1 }, Newco: { avg_position: 2 } });
  });
});

describe('parts', () => {
  it('given more answers in a day than one part holds, then they are stored in parts and every one counts', async () => {
    const big = await buildSite(s, w.a.key, { name: 'Big', url: 'https://big-m.example.com' });
    const batch = (n: number, text: string) =>
      call(s, 'POST', '/api/v1/responses/import', {
        key: w.a.key,
        body: {
          website_id: big.id,
          responses: Array.from({ length: n }, (_, i) => ({
            prompt_id: big.prompts[0].id,
            model: 'chatgpt',
            run_at: `2026-05-01T${String(i % 24).padStart(2, '0')}:00:00Z`,
            text,
          })),
        },
      });
    expect((await batch(1000, 'Big.')).status).toBe(201);
    expect((await batch(100, 'Nobody.')).status).toBe(201);
    const parts = await s.rt.database.db('rm_fact_chunks').where({ website_id: big.id }).orderBy('part').select('part', 'n');
    expect(parts).toEqual([
      { part: 0, n: 1024 },
      { part: 1, n: 76 },
    ]);
    const m = await call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', { key: w.a.key, body: { website_id: big.id } });
    expect(m.body).toMatchObject({ responses: 1100, data: { Big: { mention_rate: 90.9091 } } });
  });
});

describe('tenancy', () => {
  for (const path of ['/api/v1/metrics/mention-rate/cumulative', '/api/v1/metrics/position/time-series', '/api/v1/looker-studio/data']) {
    websiteTenancyChecks(() => w, 'POST', path);
  }
});
