import { describe, expect, it } from 'vitest';
import { provisionDemoWebsite } from '../../commands/catalog/demo-catalog';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { MODEL_IDS } from '../../src/domain/models';
import { badNames, newSite, postCreated, refusedWithoutWrite } from '../support/http';
import { call, caughtUp, sharedServer, type TestServer } from '../support/server';
import { collectionTenancyChecks, UNKNOWN_ID, useWorld, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const M = [MODEL_IDS[0], MODEL_IDS[1]];

const post = (path: string, body: unknown, key = w.a.key) => call(s, 'POST', path, { key, body });
const patch = (path: string, body: unknown, key = w.a.key) => call(s, 'PATCH', path, { key, body });
const get = (path: string, website_id: string, key = w.a.key) => call(s, 'GET', path, { key, query: { website_id } });

/** The feed rows of a website as stored: kind, ids and which key made them. */
async function feedRows(websiteId: string, entityType: string) {
  await caughtUp(s, ['activity']);
  return s.rt.database
    .db('rm_activity')
    .where({ website_id: websiteId, entity_type: entityType })
    .orderBy('seq')
    .select('change_type', 'entity_ids', 'actor_kind', 'api_key_id');
}

// by organization too: every World of a shared server names its scoped key alike
const keyIdOf = async (organizationId: string, name: string) =>
  (await s.rt.database.db('rm_api_keys').where({ organization_id: organizationId, name }).first('id')).id as string;

/** Creates a persona or an attribute (a described item): 201 answering it under `key` with its name and description. */
async function createdDescribed(path: string, key: 'persona' | 'attribute', website_id: string, name: string, description: string) {
  const r = await post(path, { website_id, name, description });
  expect(r.status).toBe(201);
  expect(r.body).toEqual({ [key]: { id: expect.any(String), name, description } });
  return r.body[key];
}

describe('personas', () => {
  it('given personas created, then they are listed in order and fed to the activity', async () => {
    const site = await newSite(s, w.a.key);
    const a = await createdDescribed('/api/v1/personas', 'persona', site, 'CFO', 'Cares about cost');
    const b = await post('/api/v1/personas', { website_id: site, name: 'Engineer' });
    expect((await get('/api/v1/personas', site)).body).toEqual({
      data: [a, { id: b.body.persona.id, name: 'Engineer', description: null }],
    });
    const feed = await feedRows(site, 'persona');
    expect(feed.map((f) => [f.change_type, f.entity_ids])).toEqual([
      ['created', [a.id]],
      ['created', [b.body.persona.id]],
    ]);
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const site = await newSite(s, w.a.key);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/personas', status: 400, error: 'website_id is required' },
      { method: 'POST', path: '/api/v1/personas', body: { name: 'X' }, status: 400, error: 'website_id is required' },
      ...badNames('/api/v1/personas', { website_id: site }),
      {
        method: 'POST',
        path: '/api/v1/personas',
        body: { website_id: site, name: 'X', description: 'd'.repeat(2001) },
        status: 400,
        error: 'description: must be at most 2000 characters',
      },
      { method: 'POST', path: '/api/v1/personas', body: { website_id: site, name: false }, status: 400, error: 'name: must be a string' },
      { method: 'POST', path: '/api/v1/personas', body: { website_id: UNKNOWN_ID, name: 'X' }, status: 404, error: 'Website not found' },
    ]);
  });

  collectionTenancyChecks('/api/v1/personas', () => w, { create: { name: 'P' } });
});

describe('locations', () => {
  it('given a location created, then 201 {id, location, country} and the listing has the same fields; a scoped key is the actor', async () => {
    const r = await post(
      '/api/v1/locations',
      { website_id: w.a.a2, location: 'Austin, Texas, United States', country: 'United States', region: 'Texas', city: 'Austin' },
      w.a.scoped,
    );
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ id: expect.any(String), location: 'Austin, Texas, United States', country: 'United States' });
    const list = await get('/api/v1/locations', w.a.a2, w.a.scoped);
    expect(list.status).toBe(200);
    expect(list.body.data).toContainEqual(r.body);
    for (const item of list.body.data)
      expect(item).toMatchObject({ id: expect.any(String), location: expect.any(String), country: expect.any(String) });
    const feed = await feedRows(w.a.a2, 'location');
    expect(feed.at(-1)).toMatchObject({
      change_type: 'created',
      entity_ids: [r.body.id],
      actor_kind: 'api_key',
      api_key_id: await keyIdOf(w.a.organization_id, 'scoped to a2'),
    });
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const site = await newSite(s, w.a.key);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/locations', status: 400, error: 'website_id is required' },
      { method: 'POST', path: '/api/v1/locations', body: { website_id: site, country: 'US' }, status: 400, error: 'location is required' },
      { method: 'POST', path: '/api/v1/locations', body: { website_id: site, location: 'X' }, status: 400, error: 'country is required' },
      {
        method: 'POST',
        path: '/api/v1/locations',
        body: { website_id: site, location: 'X', country: 'c'.repeat(101) },
        status: 400,
        error: 'country: must be at most 100 characters',
      },
      {
        method: 'POST',
        path: '/api/v1/locations',
        body: { website_id: site, location: 'X', country: 'US', city: 3 },
        status: 400,
        error: 'city: must be a string',
      },
    ]);
  });

  collectionTenancyChecks('/api/v1/locations', () => w, { create: { location: 'L', country: 'C' } });
});

describe('attributes', () => {
  it('given attributes created, then listed; a duplicate name is 409', async () => {
    const site = await newSite(s, w.a.key);
    const a = await createdDescribed('/api/v1/attributes', 'attribute', site, 'Price', 'How it is priced');
    expect((await get('/api/v1/attributes', site)).body).toEqual({ data: [a] });
    const before = await s.head();
    const dup = await post('/api/v1/attributes', { website_id: site, name: 'PRICE' });
    expect(dup.status).toBe(409);
    expect(dup.body.existing.id).toBe(a.id);
    expect(await s.head()).toBe(before);
    expect((await feedRows(site, 'attribute')).map((f) => f.change_type)).toEqual(['created']);
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const site = await newSite(s, w.a.key);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/attributes', status: 400, error: 'website_id is required' },
      ...badNames('/api/v1/attributes', { website_id: site }),
      { method: 'POST', path: '/api/v1/attributes', body: { website_id: 12, name: 'X' }, status: 400, error: 'website_id: must be a string' },
    ]);
  });

  collectionTenancyChecks('/api/v1/attributes', () => w, { create: { name: 'A' } });
});

describe('prompt schedules', () => {
  it('given a new website, then the listing holds only default, with null days', async () => {
    const site = await newSite(s, w.a.key);
    const r = await get('/api/v1/prompt-schedules', site);
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(1);
    expect(r.body.data[0]).toMatchObject({ id: 'default', starts_on: null, ends_on: null, is_active: true, archived: false });
  });

  it('given custom schedules created, edited and archived, then default stays first and archived ones stay listed', async () => {
    const site = await newSite(s, w.a.key);
    const a = (
      await postCreated(s, w.a.key, '/api/v1/prompt-schedules', {
        website_id: site,
        name: 'Q1 launch',
        models: M,
        starts_on: '2026-01-01',
        ends_on: '2026-03-31',
        frequency: 'weekly',
      })
    ).schedule;
    expect(a).toEqual({
      id: expect.any(String),
      name: 'Q1 launch',
      models: M,
      starts_on: '2026-01-01',
      ends_on: '2026-03-31',
      frequency: 'weekly',
      is_active: true,
      samples_per_prompt: 1,
      archived: false,
    });
    const b = await post('/api/v1/prompt-schedules', { website_id: site, name: 'Open', models: [MODEL_IDS[2]], frequency: 'daily' });
    expect(b.body.schedule).toMatchObject({ starts_on: null, ends_on: null });

    const edited = await patch(`/api/v1/prompt-schedules/${a.id}`, {
      website_id: site,
      ends_on: null,
      models: [MODEL_IDS[3]],
      is_active: false,
    });
    expect(edited.status).toBe(200);
    expect(edited.body.schedule).toMatchObject({
      id: a.id,
      ends_on: null,
      starts_on: '2026-01-01',
      models: [MODEL_IDS[3]],
      is_active: false,
    });

    const archived = await patch(`/api/v1/prompt-schedules/${b.body.schedule.id}`, { website_id: site, archived: true });
    expect(archived.body.schedule).toMatchObject({ archived: true, is_active: false });

    const list = (await get('/api/v1/prompt-schedules', site)).body.data;
    expect(list.map((x: { id: string }) => x.id)).toEqual(['default', a.id, b.body.schedule.id]);
    expect(list[2]).toEqual(archived.body.schedule);

    const before = await s.head();
    const edit = await patch(`/api/v1/prompt-schedules/${b.body.schedule.id}`, { website_id: site, name: 'Back' });
    expect(edit).toMatchObject({ status: 409, body: { error: 'Prompt schedule is archived' } });
    expect(await s.head()).toBe(before);

    const feed = await feedRows(site, 'prompt_schedule');
    expect(feed.map((f) => [f.change_type, f.entity_ids])).toEqual([
      ['created', [a.id]],
      ['created', [b.body.schedule.id]],
      ['updated', [a.id]],
      ['archived', [b.body.schedule.id]],
    ]);
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const site = await newSite(s, w.a.key);
    const x = (await post('/api/v1/prompt-schedules', { website_id: site, name: 'X', models: M, starts_on: '2026-05-01', frequency: 'daily' })).body
      .schedule;
    const base = { website_id: site, name: 'S', models: M, frequency: 'daily' };
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/prompt-schedules', status: 400, error: 'website_id is required' },
      {
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, starts_on: '2026-02-01', ends_on: '2026-01-31' },
        status: 400,
        error: 'ends_on: must not be before starts_on',
      },
      {
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, starts_on: '2026-13-01' },
        status: 400,
        error: 'starts_on: must be a real calendar day',
      },
      {
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, starts_on: '01/02/2026' },
        status: 400,
        error: 'starts_on: must be a date YYYY-MM-DD',
      },
      {
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, models: ['not-a-model'] },
        status: 400,
        error: /^models\[0\]: unknown model "not-a-model"/,
      },
      { method: 'POST', path: '/api/v1/prompt-schedules', body: { ...base, models: [] }, status: 400, error: 'models: must list at least one model' },
      {
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, models: 'all' },
        status: 400,
        error: 'models: must be an array of model identifiers',
      },
      { method: 'POST', path: '/api/v1/prompt-schedules', body: { ...base, frequency: undefined }, status: 400, error: 'frequency is required' },
      {
        method: 'POST',
        path: '/api/v1/prompt-schedules',
        body: { ...base, frequency: 'hourly' },
        status: 400,
        error: "frequency: must be 'daily' or 'weekly'",
      },
      ...badNames('/api/v1/prompt-schedules', base),
      {
        method: 'PATCH',
        path: `/api/v1/prompt-schedules/${x.id}`,
        body: { website_id: site, ends_on: '2026-04-30' },
        status: 400,
        error: 'ends_on: must not be before starts_on',
      },
      {
        method: 'PATCH',
        path: `/api/v1/prompt-schedules/${x.id}`,
        body: { website_id: site, archived: false },
        status: 400,
        error: 'archived: must be true (archiving cannot be undone)',
      },
      { method: 'PATCH', path: `/api/v1/prompt-schedules/${x.id}`, body: { website_id: site }, status: 400, error: /^body: nothing to change/ },
      {
        method: 'PATCH',
        path: `/api/v1/prompt-schedules/${UNKNOWN_ID}`,
        body: { website_id: site, name: 'N' },
        status: 404,
        error: 'Prompt schedule not found',
      },
      {
        method: 'PATCH',
        path: '/api/v1/prompt-schedules/default',
        body: { website_id: site, name: 'N' },
        status: 400,
        error: 'schedule_id: the default schedule cannot be changed',
      },
      {
        method: 'PATCH',
        path: '/api/v1/prompt-schedules/nope',
        body: { website_id: site, name: 'N' },
        status: 400,
        error: 'schedule_id: must be a UUID',
      },
    ]);
  });

  it("given another website's schedule id, then 404", async () => {
    const one = await newSite(s, w.a.key);
    const two = await newSite(s, w.a.key);
    const x = (await post('/api/v1/prompt-schedules', { website_id: one, name: 'X', models: M, frequency: 'daily' })).body.schedule;
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'PATCH',
        path: `/api/v1/prompt-schedules/${x.id}`,
        body: { website_id: two, name: 'N' },
        status: 404,
        error: 'Prompt schedule not found',
      },
    ]);
  });

  collectionTenancyChecks('/api/v1/prompt-schedules', () => w, { create: { name: 'S', models: M, frequency: 'daily' }, patch: { archived: true } });
});

describe('saved views', () => {
  it('given a view with an unreproducible filter, then it is stored as given; edits keep the id', async () => {
    const site = await newSite(s, w.a.key);
    const filters = { models_not: [MODEL_IDS[0]], prompt_status: 'active', sentiment: ['negative'] };
    const v = await post('/api/v1/saved-views', { website_id: site, name: 'Without one model', filters });
    expect(v.status).toBe(201);
    expect(v.body).toEqual({ view: { id: expect.any(String), name: 'Without one model', filters } });
    const id = v.body.view.id;
    const e = await patch(`/api/v1/saved-views/${id}`, { website_id: site, name: 'Renamed' });
    expect(e.body.view).toEqual({ id, name: 'Renamed', filters });
    const f = await patch(`/api/v1/saved-views/${id}`, { website_id: site, filters: { models: M } });
    expect(f.body.view).toEqual({ id, name: 'Renamed', filters: { models: M } });
    const empty = await post('/api/v1/saved-views', { website_id: site, name: 'All' });
    expect(empty.body.view.filters).toEqual({});
    expect((await get('/api/v1/saved-views', site)).body).toEqual({ data: [f.body.view, empty.body.view] });
    expect((await feedRows(site, 'saved_view')).map((r) => [r.change_type, r.entity_ids])).toEqual([
      ['created', [id]],
      ['updated', [id]],
      ['updated', [id]],
      ['created', [empty.body.view.id]],
    ]);
  });

  it('given bad input, unknown or foreign ids, then 4xx and nothing written', async () => {
    const one = await newSite(s, w.a.key);
    const two = await newSite(s, w.a.key);
    const v = (await post('/api/v1/saved-views', { website_id: one, name: 'Mine' })).body.view;
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/saved-views', status: 400, error: 'website_id is required' },
      ...badNames('/api/v1/saved-views', { website_id: one }),
      {
        method: 'POST',
        path: '/api/v1/saved-views',
        body: { website_id: one, name: 'V', filters: 'x' },
        status: 400,
        error: 'filters: must be an object',
      },
      {
        method: 'POST',
        path: '/api/v1/saved-views',
        body: { website_id: one, name: 'V', filters: { location_ids: ['x'] } },
        status: 400,
        error: 'filters.location_ids[0]: must be a UUID',
      },
      {
        method: 'POST',
        path: '/api/v1/saved-views',
        body: { website_id: one, name: 'V', filters: { big: 'x'.repeat(2001) } },
        status: 400,
        error: 'filters.big: must be at most 2000 characters',
      },
      {
        method: 'POST',
        path: '/api/v1/saved-views',
        body: { website_id: one, name: 'V', filters: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, 'x'.repeat(1900)])) },
        status: 400,
        error: 'filters: must be at most 32768 bytes of JSON',
      },
      { method: 'PATCH', path: `/api/v1/saved-views/${v.id}`, body: { website_id: two, name: 'Stolen' }, status: 404, error: 'Saved view not found' },
      {
        method: 'PATCH',
        path: `/api/v1/saved-views/${UNKNOWN_ID}`,
        body: { website_id: one, name: 'X' },
        status: 404,
        error: 'Saved view not found',
      },
      { method: 'PATCH', path: `/api/v1/saved-views/${v.id}`, body: { website_id: one }, status: 400, error: 'body: name or filters is required' },
    ]);
  });

  it("given another website's or another organization's ids in a view's filters, then 400 naming the filter and nothing written", async () => {
    // one catalogue per website: a prompt, a location, a competitor and a schedule each
    const catalogue = async (site: string, key: string) => {
      const ok = (path: string, body: object) => postCreated(s, key, path, { website_id: site, ...body });
      return {
        prompt_ids: [(await ok('/api/v1/prompts', { text: 'best widgets?' })).prompt.id],
        location_ids: [(await ok('/api/v1/locations', { location: 'Berlin, Germany', country: 'DE' })).id],
        competitor_ids: [
          (await ok('/api/v1/competitors', { name: 'Rival', url: `https://${Math.random().toString(36).slice(2)}.example.net` })).competitor.id,
        ],
        schedule_id: (await ok('/api/v1/prompt-schedules', { name: 'Daily', models: M, frequency: 'daily' })).schedule.id as string,
      };
    };
    const mine = await newSite(s, w.a.key);
    const own = await catalogue(mine, w.a.key);
    const sibling = await catalogue(await newSite(s, w.a.key), w.a.key);
    const foreign = await catalogue(w.b.b1, w.b.key);
    const view = (
      await post('/api/v1/saved-views', { website_id: mine, name: 'Own ids', filters: { ...own, prompt_ids: [own.prompt_ids[0].toUpperCase()] } })
    ).body.view;
    expect(view.filters.competitor_ids).toEqual(own.competitor_ids);
    const cases = [sibling, foreign].flatMap((other) =>
      (['prompt_ids', 'location_ids', 'competitor_ids', 'schedule_id'] as const).flatMap((field) => {
        const what = { prompt_ids: 'prompt', location_ids: 'location', competitor_ids: 'competitor', schedule_id: 'schedule' }[field];
        // the foreign id comes second in a list, so the message must point at it
        const filters = { ...own, [field]: field === 'schedule_id' ? other.schedule_id : [...own[field], ...other[field]] };
        const error =
          field === 'schedule_id'
            ? `filters.schedule_id: no schedule of this website has this id`
            : `filters.${field}[1]: no ${what} of this website has this id`;
        return [
          { method: 'POST', path: '/api/v1/saved-views', body: { website_id: mine, name: 'Borrowed', filters }, status: 400, error },
          { method: 'PATCH', path: `/api/v1/saved-views/${view.id}`, body: { website_id: mine, filters }, status: 400, error },
        ];
      }),
    );
    await refusedWithoutWrite(s, w.a.key, cases);
    expect((await get('/api/v1/saved-views', mine)).body.data).toEqual([view]);
  });

  it('given an invalid, impossible, out-of-range or inverted date range in the filters, then 400 naming the field as the metric reads do, and nothing written', async () => {
    const site = await newSite(s, w.a.key);
    // a start later on the day a plain end date covers is a valid range, stored as given
    const kept = { start_date: '2026-03-03T12:00:00Z', end_date: '2026-03-03' };
    const view = (await post('/api/v1/saved-views', { website_id: site, name: 'March 3', filters: kept })).body.view;
    expect(view.filters).toEqual(kept);
    const ranges: [filters: Record<string, string>, error: string][] = [
      [
        { start_date: 'yesterday' },
        'filters.start_date: invalid date "yesterday": expected YYYY-MM-DD or an ISO 8601 date-time such as 2026-03-05T00:00:00Z',
      ],
      [{ end_date: '2026-02-30' }, 'filters.end_date: invalid date "2026-02-30": day 30 does not exist in February 2026 (it has 28 days)'],
      [{ start_date: '0000-12-31' }, 'filters.start_date: invalid date "0000-12-31": year 0 is out of range'],
      [{ start_date: '2026-03-03', end_date: '2026-03-01' }, 'filters.end_date: is before start_date (2026-03-03T00:00:00.000Z)'],
      [{ start_date: '2026-03-03', end_date: '2026-03-02T23:59:59Z' }, 'filters.end_date: is before start_date (2026-03-03T00:00:00.000Z)'],
    ];
    for (const [filters, error] of ranges) {
      // the message the metric reads give for the same range
      const read = await post('/api/v1/metrics/mention-rate/cumulative', { website_id: site, filters });
      expect(read.body, JSON.stringify(filters)).toEqual({ error });
    }
    await refusedWithoutWrite(
      s,
      w.a.key,
      ranges.flatMap(([filters, error]) => [
        { method: 'POST', path: '/api/v1/saved-views', body: { website_id: site, name: 'Bad range', filters }, status: 400, error },
        { method: 'PATCH', path: `/api/v1/saved-views/${view.id}`, body: { website_id: site, filters }, status: 400, error },
      ]),
    );
    expect((await get('/api/v1/saved-views', site)).body.data).toEqual([view]);
  });

  collectionTenancyChecks('/api/v1/saved-views', () => w, { create: { name: 'V' }, patch: { name: 'V' } });
});

describe('provisioned catalogue', () => {
  it('given a provisioned website, then its competitors, topics and prompts are listed by the catalogue endpoints', async () => {
    const r = await post('/api/v1/websites/provision', {
      name: 'Prov',
      url: 'https://prov-cat.example.com',
      competitors: [{ name: 'Rival', url: 'https://rival-cat.example.net', identifiers: ['RivalCo'] }],
      topics: [{ name: 'Pricing', prompts: [{ text: 'cheap widgets' }, { text: 'is prov good', type: 'branded' }] }],
    });
    expect(r.status).toBe(201);
    const site = r.body.website.id;
    expect((await get('/api/v1/competitors', site)).body.competitors).toEqual(r.body.competitors);
    expect((await get('/api/v1/topics', site)).body.data).toEqual([{ id: r.body.topics[0].id, name: 'Pricing', prompt_count: 2 }]);
    const prompts = (await get('/api/v1/prompts', site)).body.data;
    expect(prompts.map((p: { text: string; type: string }) => [p.text, p.type])).toEqual([
      ['cheap widgets', 'non_branded'],
      ['is prov good', 'branded'],
    ]);
    // the provisioned catalogue is the same stream the catalogue commands write
    const t = await post('/api/v1/topics', { website_id: site, name: 'pricing' });
    expect(t.status).toBe(409);
  });
});

describe('embedded demo', () => {
  it('given the demo website, then every catalogue listing has something, written by the system', async () => {
    const org = await s.org('Demo');
    const demo = await provisionDemoWebsite(
      { store: s.rt.store, organizationId: org.organization_id, actor: SYSTEM_ACTOR },
      new Date('2026-03-01T12:00:00Z'),
    );
    expect(await s.rt.waitForReadModels(demo.position, 'all', 60_000)).toBe(true);
    const site = demo.website_id;
    const listing = async (path: string) => {
      const r = await get(path, site, org.key);
      expect(r.status, path).toBe(200);
      return r.body;
    };
    expect((await listing('/api/v1/competitors')).competitors).toHaveLength(3);
    expect((await listing('/api/v1/topics')).data.map((t: { name: string }) => t.name)).toEqual(['Pricing', 'Integrations', 'Support']);
    expect((await listing('/api/v1/prompts')).data).toHaveLength(5);
    expect((await listing('/api/v1/locations')).data).toHaveLength(1);
    expect((await listing('/api/v1/personas')).data).toHaveLength(1);
    expect((await listing('/api/v1/attributes')).data).toHaveLength(2);
    const schedules = (await listing('/api/v1/prompt-schedules')).data;
    expect(schedules.map((x: { id: string }) => x.id)[0]).toBe('default');
    expect(schedules[1]).toMatchObject({ name: 'Weekly launch check', starts_on: '2026-03-01', ends_on: null, frequency: 'weekly' });
    expect((await listing('/api/v1/saved-views')).data[0].filters.models_not).toEqual([MODEL_IDS[MODEL_IDS.length - 1]]);
    await caughtUp(s, ['activity']);
    const kinds = await s.rt.database.db('rm_activity').where('website_id', site).distinct('actor_kind');
    expect(kinds).toEqual([{ actor_kind: 'system' }]);
  });
});
