import { describe, expect, it } from 'vitest';
import { resolveSelection } from '../../queries/filters';
import { listObservations, type ObservationRequest, observationTargets } from '../../queries/observations/list';
import { deterministicId } from '../../src/domain/ids';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, type Site } from '../support/answers';
import { OBSERVATIONS_REQUEST_FIELDS } from '../support/observations';
import { call, type TestServer, sharedServer } from '../support/server';
import { UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;

const PATH = '/api/v1/attributes/observations';
const [M0, M1, M2] = MODEL_IDS;

const post = (path: string, body: unknown, key = w.a.key) => call(s, 'POST', path, { key, body });
const created = async (path: string, body: unknown) => {
  const r = await post(path, body);
  expect(r.status, `${path} ${JSON.stringify(r.body)}`).toBe(201);
  return r.body;
};

/** One observation as the fixture wrote it, with what the filters and sorts read. */
interface Fx {
  id: string;
  response_id: string;
  prompt_id: string;
  model: string;
  location_id: string | null;
  schedule_id: string | null;
  entity_id: string;
  attribute_id: string;
  positive: boolean;
  score: number | null;
  text_span: string;
  /** the answer's time to the second, as the API shows it */
  created_at: string;
}

interface Item {
  prompt_id: string;
  model: string;
  run_at: string;
  location_id?: string | null;
  schedule_id?: string | null;
  observations: { entity_id: string; attribute_id: string; positive: boolean; score?: number | null; text_span: string }[];
}

/** Imports answers with observations; returns the observations with the ids the import derives. */
async function importObservations(websiteId: string, items: Item[]): Promise<Fx[]> {
  const r = await post('/api/v1/responses/import', {
    website_id: websiteId,
    responses: items.map((it) => ({ ...it, text: `Answer about ${it.observations.map((o) => o.text_span).join(', ')}.` })),
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return items.flatMap((it, i) =>
    it.observations.map((o, j) => ({
      ...o,
      id: deterministicId('observation', r.body.response_ids[i], String(j)),
      response_id: r.body.response_ids[i],
      prompt_id: it.prompt_id,
      model: it.model,
      location_id: it.location_id ?? null,
      schedule_id: it.schedule_id ?? null,
      score: o.score ?? null,
      created_at: `${it.run_at.slice(0, 19)}Z`,
    })),
  );
}

/** The direction rule: a null score counts as +1 or -1, so its strength is 1. */
const intensity = (o: Fx) => Math.abs(o.score ?? 1);
const byIntensity = (a: Fx, b: Fx) => intensity(b) - intensity(a) || b.created_at.localeCompare(a.created_at) || (a.id < b.id ? -1 : 1);
const byRecent = (a: Fx, b: Fx) => b.created_at.localeCompare(a.created_at) || (a.id < b.id ? -1 : 1);

// ---- the fixture: Acme with two competitors, four prompts (one paused, one branded, one soft-deleted after its answers), two locations, three attributes, a custom schedule ----

let site: Site;
let brand: string;
let globex: string;
let initech: string;
let attrs: string[];
let schedule: string;
let deletedPrompt: string;
let all: Fx[];
/** what a request without saved view sees by default: the default schedule, prompts not soft-deleted */
let visible: Fx[];

const MAGNITUDES = [0.9, null, 0.3, 1, 0.5, null, 0.1, 0.7];
const TIMES = ['08:30:15.789', '09:00:00.000', '13:45:59.999', '23:59:59.500'];

async function buildFixture() {
  site = await buildSite(s, w.a.key, {
    name: 'Acme',
    competitors: [
      { name: 'Globex', url: 'https://globex.example.net' },
      { name: 'Initech', url: 'https://initech.example.org' },
    ],
    prompts: [{ text: 'Best CRM?' }, { text: 'Is Acme good?', type: 'branded' }, { text: 'Paused one', status: 'paused' }, { text: 'Soon deleted' }],
    locations: [
      { location: 'Berlin, Germany', country: 'Germany' },
      { location: 'Austin, Texas, United States', country: 'United States' },
    ],
    attributes: [{ name: 'Price' }, { name: 'Support' }, { name: 'Speed' }],
  });
  brand = site.id;
  [globex, initech] = site.competitors.map((c) => c.id);
  attrs = site.attributes.map((a) => a.id);
  deletedPrompt = site.prompts[3].id;
  schedule = (await created('/api/v1/prompt-schedules', { website_id: site.id, name: 'Weekly', models: [M0], frequency: 'weekly' })).schedule.id;
  const entities = [brand, globex, initech];
  const items: Item[] = [];
  for (let i = 0; i < 24; i++) {
    items.push({
      prompt_id: site.prompts[i % 4].id,
      model: MODEL_IDS[i % 3],
      run_at: `2025-06-0${1 + Math.floor(i / 4)}T${TIMES[(i + Math.floor(i / 4)) % 4]}Z`,
      location_id: i % 5 === 0 ? null : site.locations[i % 2].id,
      schedule_id: i % 7 === 6 ? schedule : null,
      observations: [0, 1].map((j) => {
        const positive = (i + j) % 3 !== 0;
        const m = MAGNITUDES[(i * 2 + j + Math.floor(i / 4)) % MAGNITUDES.length];
        return {
          entity_id: entities[(i + j) % 3],
          attribute_id: attrs[(i * 2 + j) % 3],
          positive,
          score: m === null ? null : positive ? m : -m,
          text_span: `span ${i}.${j}`,
        };
      }),
    });
  }
  // one answer whose observations tie on strength (1, -1 and unscored ones both ways) and on time: the id decides
  items.push({
    prompt_id: site.prompts[0].id,
    model: M2,
    run_at: '2025-06-03T10:00:00.000Z',
    location_id: site.locations[0].id,
    observations: [
      { entity_id: brand, attribute_id: attrs[0], positive: true, text_span: 'tie unscored praise' },
      { entity_id: globex, attribute_id: attrs[1], positive: false, score: null, text_span: 'tie unscored criticism' },
      { entity_id: initech, attribute_id: attrs[2], positive: true, score: 1, text_span: 'tie full praise' },
      { entity_id: brand, attribute_id: attrs[1], positive: false, score: -1, text_span: 'tie full criticism' },
    ],
  });
  all = await importObservations(site.id, items);
  const del = await call(s, 'DELETE', `/api/v1/prompts/${deletedPrompt}`, { key: w.a.key, query: { website_id: site.id } });
  expect(del.body).toMatchObject({ success: true, soft_deleted: true });
  visible = all.filter((o) => o.schedule_id === null && o.prompt_id !== deletedPrompt);
}

useWorld(async (ctx) => {
  ({ s, w } = ctx);
  await buildFixture();
}, sharedServer);

const START = '2025-01-01T00:00:00Z';

/** Every observation a request selects (all pages of 100), as text spans in the order given. */
async function spans(body: Record<string, unknown>, key = w.a.key): Promise<string[]> {
  const out: string[] = [];
  for (let page_num = 0; ; page_num++) {
    const r = await post(PATH, { website_id: site.id, page_size: 100, ...body, page_num }, key);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    out.push(...r.body.data.map((o: { text_span: string }) => o.text_span));
    if (!r.body.has_more) return out;
  }
}
const expected = (keep: (o: Fx) => boolean, sort = byIntensity, from = visible) =>
  from
    .filter(keep)
    .sort(sort)
    .map((o) => o.text_span);
const list = (filters: Record<string, unknown>, rest: Record<string, unknown> = {}) => spans({ filters: { start_date: START, ...filters }, ...rest });

describe('POST /api/v1/attributes/observations: selection and order', () => {
  it('given observations, when only start_date is sent, then those of the default schedule and live prompts come strongest first, a null score counting as 1', async () => {
    const got = await list({});
    expect(got).toEqual(expected(() => true));
    expect(got.length).toBe(visible.length);
    // paused prompts count without a saved view; another schedule and a soft-deleted prompt do not
    expect(visible.some((o) => o.prompt_id === site.prompts[2].id)).toBe(true);
    expect(got).not.toContain(all.find((o) => o.schedule_id === schedule)!.text_span);
    expect(got).not.toContain(all.find((o) => o.prompt_id === deletedPrompt)!.text_span);
    // the tie: four observations of strength 1 at the same second, in id order
    const tie = all
      .filter((o) => o.text_span.startsWith('tie '))
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((o) => o.text_span);
    expect(got.filter((t) => t.startsWith('tie '))).toEqual(tie);
    const firstTie = got.indexOf(tie[0]);
    expect(got.slice(firstTie, firstTie + 4)).toEqual(tie);
  });

  it('given sort recent, then newest first, ties by id', async () => {
    const got = await list({}, { sort: 'recent' });
    expect(got).toEqual(expected(() => true, byRecent));
  });

  it('given sort intensity explicitly, then the same as the default', async () => {
    expect(await list({}, { sort: 'intensity' })).toEqual(await list({}));
  });

  it('given the whole object, then every field of the spec is present with its value', async () => {
    const r = await post(PATH, { website_id: site.id, filters: { start_date: '2025-06-01T08:30:15Z', end_date: '2025-06-01T08:30:15Z' } });
    expect(r.status).toBe(200);
    const first = all.filter((o) => o.created_at === '2025-06-01T08:30:15Z').sort(byIntensity);
    expect(first).toHaveLength(2);
    const names: Record<string, string> = { [brand]: 'Acme', [globex]: 'Globex', [initech]: 'Initech' };
    expect(r.body).toEqual({
      data: first.map((o) => ({
        observation_id: o.id,
        response_id: o.response_id,
        entity_id: o.entity_id,
        entity_name: names[o.entity_id],
        is_website: o.entity_id === brand,
        attribute_id: o.attribute_id,
        attribute_name: site.attributes.find((a) => a.id === o.attribute_id)!.name,
        positive: o.positive,
        score: o.score,
        text_span: o.text_span,
        model: o.model,
        created_at: '2025-06-01T08:30:15Z',
      })),
      page_num: 0,
      page_size: 40,
      has_more: false,
    });
    for (const o of r.body.data)
      expect(Object.keys(o).sort()).toEqual([
        'attribute_id',
        'attribute_name',
        'created_at',
        'entity_id',
        'entity_name',
        'is_website',
        'model',
        'observation_id',
        'positive',
        'response_id',
        'score',
        'text_span',
      ]);
    // an unscored observation carries score null (the key is there)
    const unscored = await post(PATH, { website_id: site.id, filters: { start_date: '2025-06-03T10:00:00Z', end_date: '2025-06-03T10:00:00Z' } });
    const tie = unscored.body.data.find((o: { text_span: string }) => o.text_span === 'tie unscored praise');
    expect(tie).toMatchObject({
      score: null,
      positive: true,
      entity_id: brand,
      entity_name: 'Acme',
      is_website: true,
      attribute_name: 'Price',
      created_at: '2025-06-03T10:00:00Z',
    });
  });

  it('given imported scores finer than 3 decimals, then strength compares to 3 decimals (what the extractors write) and a tie goes to the newer', async () => {
    const other = await buildSite(s, w.a.key, { attributes: [{ name: 'Price' }] });
    const a = other.attributes[0].id;
    const at = (run_at: string, score: number, text_span: string): Item => ({
      prompt_id: other.prompts[0].id,
      model: M0,
      run_at,
      observations: [{ entity_id: other.id, attribute_id: a, positive: score > 0, score, text_span }],
    });
    await importObservations(other.id, [
      at('2025-05-01T10:00:00Z', 0.6004, 'older, finer'),
      at('2025-05-02T10:00:00Z', -0.6001, 'newer'),
      at('2025-05-01T09:00:00Z', 0.6016, 'stronger'),
    ]);
    const r = await post(PATH, { website_id: other.id, filters: { start_date: START } });
    expect(r.body.data.map((o: { text_span: string; score: number }) => [o.text_span, o.score])).toEqual([
      ['stronger', 0.6016],
      ['newer', -0.6001],
      ['older, finer', 0.6004],
    ]);
  });

  it('given created_at, then it is the answer time truncated to the second, ISO UTC', async () => {
    const r = await post(PATH, { website_id: site.id, filters: { start_date: START }, sort: 'recent', page_size: 100 });
    for (const o of r.body.data) expect(o.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(r.body.data.map((o: { created_at: string }) => o.created_at)).toContain('2025-06-02T13:45:59Z');
  });
});

describe('POST /api/v1/attributes/observations: filters', () => {
  it('given start_date and end_date, then both bounds are inclusive as given, to the second', async () => {
    // 2025-06-01T08:30:15.789 is observed at 08:30:15; 2025-06-02T13:45:59.999 at 13:45:59
    const from = '2025-06-01T08:30:15Z';
    const to = '2025-06-02T13:45:59Z';
    const got = await list({ start_date: from, end_date: to });
    expect(got).toEqual(expected((o) => o.created_at >= from && o.created_at <= to));
    expect(got).toContain('span 0.0');
    expect(got).toContain('span 5.0');
    // one second later at the start and one earlier at the end leave both answers out
    const inner = await list({ start_date: '2025-06-01T08:30:16Z', end_date: '2025-06-02T13:45:58Z' });
    expect(inner).not.toContain('span 0.0');
    expect(inner).not.toContain('span 5.0');
    expect(inner.length).toBe(got.length - 4);
    // an offset is an instant: 10:30:15+02:00 is 08:30:15Z
    expect(await list({ start_date: '2025-06-01T10:30:15+02:00', end_date: to })).toEqual(got);
    expect(await list({ start_date: '2025-07-01T00:00:00Z' })).toEqual([]);
  });

  it('given models, prompt_ids, location_ids, prompt_status, prompt_type, then each narrows the selection', async () => {
    const [p0, p1, p2] = site.prompts.map((p) => p.id);
    const [l0, l1] = site.locations.map((l) => l.id);
    expect(await list({ models: [M1] })).toEqual(expected((o) => o.model === M1));
    expect(await list({ models: [M0, M2] })).toEqual(expected((o) => o.model === M0 || o.model === M2));
    expect(await list({ prompt_ids: [p1] })).toEqual(expected((o) => o.prompt_id === p1));
    expect(await list({ prompt_ids: [p0, p2] })).toEqual(expected((o) => o.prompt_id === p0 || o.prompt_id === p2));
    // a soft-deleted prompt's id is still the website's: it selects nothing
    expect(await list({ prompt_ids: [deletedPrompt] })).toEqual([]);
    expect(await list({ location_ids: [l1] })).toEqual(expected((o) => o.location_id === l1));
    expect(await list({ location_ids: [l0, l1] })).toEqual(expected((o) => o.location_id !== null));
    expect(await list({ prompt_status: 'paused' })).toEqual(expected((o) => o.prompt_id === p2));
    expect(await list({ prompt_status: 'active' })).toEqual(expected((o) => o.prompt_id !== p2));
    expect(await list({ prompt_type: 'branded' })).toEqual(expected((o) => o.prompt_id === p1));
    expect(await list({ prompt_type: 'non_branded', models: [M0] })).toEqual(expected((o) => o.prompt_id !== p1 && o.model === M0));
    expect((await list({ models: [M1] })).length).toBeGreaterThan(0);
  });

  it('given schedule_id, then that schedule only; default and manual select answers without one', async () => {
    expect(await list({ schedule_id: schedule })).toEqual(
      expected(
        (o) => o.schedule_id === schedule,
        byIntensity,
        all.filter((o) => o.prompt_id !== deletedPrompt),
      ),
    );
    expect((await list({ schedule_id: schedule })).length).toBeGreaterThan(0);
    expect(await list({ schedule_id: 'default' })).toEqual(expected(() => true));
    expect(await list({ schedule_id: 'manual' })).toEqual(expected(() => true));
  });

  it('given entity_ids, attribute_ids and positive, then each narrows the observations', async () => {
    expect(await list({}, { entity_ids: [brand] })).toEqual(expected((o) => o.entity_id === brand));
    expect(await list({}, { entity_ids: [globex, initech] })).toEqual(expected((o) => o.entity_id !== brand));
    expect(await list({}, { entity_ids: [globex.toUpperCase(), globex] })).toEqual(expected((o) => o.entity_id === globex));
    expect(await list({}, { attribute_ids: [attrs[1]] })).toEqual(expected((o) => o.attribute_id === attrs[1]));
    expect(await list({}, { attribute_ids: [attrs[0], attrs[2]] })).toEqual(expected((o) => o.attribute_id !== attrs[1]));
    expect(await list({}, { positive: true })).toEqual(expected((o) => o.positive));
    expect(await list({}, { positive: false })).toEqual(expected((o) => !o.positive));
    expect(await list({}, { positive: false, sort: 'recent' })).toEqual(expected((o) => !o.positive, byRecent));
    // all of them together, around one observation the fixture holds
    const v = visible[5];
    const models = [v.model, MODEL_IDS.find((m) => m !== v.model)!];
    const entityIds = [v.entity_id, [brand, globex, initech].find((e) => e !== v.entity_id)!];
    const keep = (o: Fx) =>
      models.includes(o.model) && entityIds.includes(o.entity_id) && o.attribute_id === v.attribute_id && o.positive === v.positive;
    const combined = await list({ models }, { entity_ids: entityIds, attribute_ids: [v.attribute_id], positive: v.positive });
    expect(combined).toEqual(expected(keep));
    expect(combined).toContain(v.text_span);
    expect(await list({ models }, { entity_ids: entityIds, attribute_ids: [v.attribute_id], positive: v.positive, sort: 'recent' })).toEqual(
      expected(keep, byRecent),
    );
    expect(await list({}, { entity_ids: [], attribute_ids: [] })).toEqual([]);
  });

  it('given a saved view, then its filters apply (active prompts only), the request dates win over its range, and a field sent replaces the view value', async () => {
    const [, p1, p2] = site.prompts.map((p) => p.id);
    const [l0, l1] = site.locations.map((l) => l.id);
    const view = (
      await created('/api/v1/saved-views', {
        website_id: site.id,
        name: 'Berlin, two models',
        filters: { models: [M0, M1], location_ids: [l0], start_date: '2025-06-04', end_date: '2025-06-04', sentiment: 'negative' },
      })
    ).view;
    const inView = (o: Fx) => [M0, M1].includes(o.model) && o.location_id === l0 && o.prompt_id !== p2;
    // the request's start_date wins over the view's; the view's end (a plain date: the whole day) stays when none is sent
    const viewed = await list({ saved_view_id: view.id });
    expect(viewed).toEqual(expected((o) => inView(o) && o.created_at <= '2025-06-04T23:59:59Z'));
    expect(visible.filter((o) => inView(o) && o.created_at < '2025-06-04').length).toBeGreaterThan(0);
    expect(visible.filter((o) => inView(o) && o.created_at > '2025-06-05').length).toBeGreaterThan(0);
    // the request's end_date wins too
    expect(await list({ saved_view_id: view.id, end_date: '2025-06-30T00:00:00Z' })).toEqual(expected(inView));
    expect(await list({ saved_view_id: view.id, end_date: '2025-06-02T23:59:59Z' })).toEqual(
      expected((o) => inView(o) && o.created_at <= '2025-06-02T23:59:59Z'),
    );
    // a field sent next to the view replaces its value
    const end = '2025-06-30T00:00:00Z';
    expect(await list({ saved_view_id: view.id, end_date: end, models: [M2] })).toEqual(
      expected((o) => o.model === M2 && o.location_id === l0 && o.prompt_id !== p2),
    );
    expect(await list({ saved_view_id: view.id, end_date: end, prompt_status: 'paused' })).toEqual(
      expected((o) => [M0, M1].includes(o.model) && o.location_id === l0 && o.prompt_id === p2),
    );
    expect(await list({ saved_view_id: view.id, end_date: end, prompt_type: 'non_branded' })).toEqual(
      expected((o) => inView(o) && o.prompt_id !== p1),
    );
    expect(await list({ saved_view_id: view.id, end_date: end, location_ids: [l1] })).toEqual(
      expected((o) => [M0, M1].includes(o.model) && o.location_id === l1 && o.prompt_id !== p2),
    );
    const missing = await post(PATH, { website_id: site.id, filters: { start_date: START, saved_view_id: UNKNOWN_ID } });
    expect(missing).toMatchObject({ status: 404, body: { error: 'Saved view not found' } });
    const unreproducible = (await created('/api/v1/saved-views', { website_id: site.id, name: 'Not one model', filters: { models_not: [M0] } })).view;
    const refused = await post(PATH, { website_id: site.id, filters: { start_date: START, saved_view_id: unreproducible.id } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/^filters\.saved_view_id: .*models_not/);
    expect(await list({ saved_view_id: unreproducible.id, models: [M1] })).toEqual(expected((o) => o.model === M1 && o.prompt_id !== p2));
  });

  it('given a renamed competitor, then entity_name is its current name; given a removed one, then its observations leave the listing and its id is refused', async () => {
    const other = await buildSite(s, w.a.key, {
      name: 'Orbit',
      competitors: [
        { name: 'Old Name', url: 'https://old-name.example.net' },
        { name: 'Gone', url: 'https://gone.example.net' },
      ],
      attributes: [{ name: 'Price' }],
    });
    const [renamed, gone] = other.competitors.map((c) => c.id);
    const a = other.attributes[0].id;
    await importObservations(other.id, [
      {
        prompt_id: other.prompts[0].id,
        model: M0,
        run_at: '2025-05-01T12:00:00Z',
        observations: [
          { entity_id: renamed, attribute_id: a, positive: true, score: 0.4, text_span: 'renamed' },
          { entity_id: gone, attribute_id: a, positive: false, score: -0.6, text_span: 'gone' },
          { entity_id: other.id, attribute_id: a, positive: true, score: 0.2, text_span: 'brand' },
        ],
      },
    ]);
    expect(
      (await call(s, 'PATCH', `/api/v1/competitors/${renamed}`, { key: w.a.key, body: { website_id: other.id, name: 'New Name' } })).status,
    ).toBe(200);
    const before = await post(PATH, { website_id: other.id, filters: { start_date: START } });
    expect(
      before.body.data.map((o: { text_span: string; entity_name: string; is_website: boolean }) => [o.text_span, o.entity_name, o.is_website]),
    ).toEqual([
      ['gone', 'Gone', false],
      ['renamed', 'New Name', false],
      ['brand', 'Orbit', true],
    ]);
    expect((await call(s, 'DELETE', `/api/v1/competitors/${gone}`, { key: w.a.key, query: { website_id: other.id } })).status).toBe(200);
    const after = await post(PATH, { website_id: other.id, filters: { start_date: START } });
    expect(after.body.data.map((o: { text_span: string }) => o.text_span)).toEqual(['renamed', 'brand']);
    const refused = await post(PATH, { website_id: other.id, filters: { start_date: START }, entity_ids: [other.id, gone] });
    expect(refused).toMatchObject({ status: 400, body: { error: "entity_ids[1]: not the website_id or one of its competitors' ids" } });
  });
});

describe('POST /api/v1/attributes/observations: paging', () => {
  it('given page_size 7, then pages follow each other without overlap or gap, has_more until the last, then empty pages', async () => {
    for (const sort of ['intensity', 'recent'] as const) {
      const pages: string[][] = [];
      for (let page_num = 0; ; page_num++) {
        const r = await post(PATH, { website_id: site.id, filters: { start_date: START }, sort, page_num, page_size: 7 });
        expect(r.status).toBe(200);
        expect(r.body).toMatchObject({ page_num, page_size: 7 });
        pages.push(r.body.data.map((o: { text_span: string }) => o.text_span));
        expect(r.body.has_more).toBe(pages.flat().length < visible.length);
        if (!r.body.has_more) break;
      }
      expect(pages.flat()).toEqual(expected(() => true, sort === 'recent' ? byRecent : byIntensity));
      expect(pages.slice(0, -1).every((p) => p.length === 7)).toBe(true);
      const beyond = await post(PATH, { website_id: site.id, filters: { start_date: START }, sort, page_num: pages.length + 3, page_size: 7 });
      expect(beyond.body).toEqual({ data: [], page_num: pages.length + 3, page_size: 7, has_more: false });
    }
    // an exact multiple: the last full page says no more
    const exact = await post(PATH, { website_id: site.id, filters: { start_date: START }, page_size: visible.length });
    expect(exact.body.has_more).toBe(false);
    expect(exact.body.data).toHaveLength(visible.length);
  });

  it('given no page_num and page_size, then page 0 of 40', async () => {
    const r = await post(PATH, { website_id: site.id, filters: { start_date: START } });
    expect(r.body).toMatchObject({ page_num: 0, page_size: 40 });
    expect(r.body.data).toHaveLength(Math.min(40, visible.length));
    expect(r.body.has_more).toBe(visible.length > 40);
  });
});

describe('the listing query: both plans give the same pages', () => {
  // with entity_ids or attribute_ids, up to TARGET_PROBE matches are read through by_target and sorted; more, and the
  // intensity levels are walked. probe 0 always walks; a huge probe always reads the matches.
  it('given entity, attribute and other filters, when forced to walk the levels or to read the matches, then every page is the reference one', async () => {
    const db = s.rt.database.db;
    const targets = await observationTargets(db, { id: site.id, name: 'Acme' });
    const requests: { filters: Record<string, unknown>; request: Partial<ObservationRequest>; keep: (o: Fx) => boolean }[] = [
      { filters: {}, request: { entity_ids: [brand] }, keep: (o) => o.entity_id === brand },
      { filters: {}, request: { attribute_ids: [attrs[0], attrs[2]], positive: false }, keep: (o) => o.attribute_id !== attrs[1] && !o.positive },
      {
        filters: { models: [M0, M2] },
        request: { entity_ids: [globex, initech], attribute_ids: [attrs[1]] },
        keep: (o) => [M0, M2].includes(o.model) && o.entity_id !== brand && o.attribute_id === attrs[1],
      },
      {
        filters: { end_date: new Date('2025-06-03T12:00:00Z') },
        request: { entity_ids: [brand, globex, initech] },
        keep: (o) => o.created_at <= '2025-06-03T12:00:00Z',
      },
      {
        filters: { location_ids: [site.locations[0].id] },
        request: { positive: true },
        keep: (o) => o.location_id === site.locations[0].id && o.positive,
      },
    ];
    for (const q of requests) {
      const selection = await resolveSelection(db, site.id, { start_date: new Date(START), ...q.filters });
      const want = expected(q.keep);
      expect(want.length).toBeGreaterThan(3);
      for (const probe of [0, 1, 2, 1_000_000]) {
        for (const page_size of [3, 100]) {
          const got: string[] = [];
          for (let page_num = 0; page_num < 40; page_num++) {
            const page = await listObservations(db, selection, targets, { sort: 'intensity', page_num, page_size, ...q.request }, { probe });
            got.push(...page.data.map((o) => o.text_span));
            expect(page.has_more).toBe(got.length < want.length);
            if (!page.has_more) break;
          }
          expect(got, `probe ${probe}, page_size ${page_size}, ${JSON.stringify(q.request)}`).toEqual(want);
        }
      }
    }
  });
});

describe('POST /api/v1/attributes/observations: refusals', () => {
  const refused = async (body: unknown, status: number, error: string | RegExp) => {
    const before = await s.head();
    const r = await post(PATH, body);
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(Object.keys(r.body)).toEqual(['error']);
    if (typeof error === 'string') expect(r.body.error).toBe(error);
    else expect(r.body.error).toMatch(error);
    expect(await s.head()).toBe(before);
  };
  const f = { start_date: START };

  it('given bad bodies, then 400 naming the field', async () => {
    const id = site.id;
    await refused({ filters: f }, 400, 'website_id is required');
    await refused({ website_id: 'nope', filters: f }, 400, 'website_id: must be a UUID');
    await refused({ website_id: id }, 400, 'filters is required');
    await refused({ website_id: id, filters: {} }, 400, 'filters.start_date is required');
    await refused({ website_id: id, filters: { end_date: '2025-06-01T00:00:00Z' } }, 400, 'filters.start_date is required');
    await refused({ website_id: id, filters: 'x' }, 400, /^filters: /);
    await refused({ website_id: id, filters: { ...f, competitor_ids: [globex] } }, 400, 'filters.competitor_ids is not allowed');
    await refused({ website_id: id, filters: { ...f, prompt_tags: ['x'] } }, 400, 'filters.prompt_tags is not allowed');
    await refused({ website_id: id, filters: { ...f, sentiment: 'positive' } }, 400, 'filters.sentiment is not allowed');
    await refused({ website_id: id, filters: f, extra: 1 }, 400, 'extra is not allowed');
    await refused(
      { website_id: id, filters: { start_date: '2025-06-01' } },
      400,
      /^filters\.start_date: invalid date "2025-06-01": a date-time is required/,
    );
    await refused(
      { website_id: id, filters: { ...f, end_date: '2025-06-30' } },
      400,
      /^filters\.end_date: invalid date "2025-06-30": a date-time is required/,
    );
    await refused({ website_id: id, filters: { start_date: 'June 1, 2025' } }, 400, /^filters\.start_date: invalid date/);
    await refused(
      { website_id: id, filters: { start_date: '2025-06-02T00:00:00Z', end_date: '2025-06-01T00:00:00Z' } },
      400,
      /^filters\.end_date: is before start_date/,
    );
    await refused({ website_id: id, filters: { ...f, models: ['nope'] } }, 400, /^filters\.models\[0\]: /);
    await refused(
      { website_id: id, filters: { ...f, schedule_id: 'weekly' } },
      400,
      "filters.schedule_id: must be 'default' or a schedule id (UUID)",
    );
    await refused(
      { website_id: id, filters: { ...f, schedule_id: UNKNOWN_ID } },
      400,
      'filters.schedule_id: no schedule of this website has this id',
    );
    await refused(
      { website_id: id, filters: { ...f, prompt_ids: [site.prompts[0].id, UNKNOWN_ID] } },
      400,
      'filters.prompt_ids[1]: no prompt of this website has this id',
    );
    await refused(
      { website_id: id, filters: { ...f, location_ids: [UNKNOWN_ID] } },
      400,
      'filters.location_ids[0]: no location of this website has this id',
    );
    await refused({ website_id: id, filters: { ...f, prompt_status: 'deleted' } }, 400, "filters.prompt_status: must be 'active' or 'paused'");
    await refused({ website_id: id, filters: f, page_size: 101 }, 400, 'page_size: must be between 1 and 100');
    await refused({ website_id: id, filters: f, page_size: 0 }, 400, 'page_size: must be between 1 and 100');
    await refused({ website_id: id, filters: f, page_size: 2.5 }, 400, 'page_size: must be an integer');
    await refused({ website_id: id, filters: f, page_num: -1 }, 400, 'page_num: must be at least 0');
    await refused({ website_id: id, filters: f, page_num: '1' }, 400, 'page_num: must be an integer');
    await refused(
      { website_id: id, filters: f, entity_ids: Array.from({ length: 101 }, () => brand) },
      400,
      'entity_ids: must have at most 100 items',
    );
    await refused(
      { website_id: id, filters: f, attribute_ids: Array.from({ length: 101 }, () => attrs[0]) },
      400,
      'attribute_ids: must have at most 100 items',
    );
    await refused({ website_id: id, filters: f, entity_ids: [brand, 'not-a-uuid'] }, 400, 'entity_ids[1]: must be a UUID');
    await refused({ website_id: id, filters: f, attribute_ids: ['x'] }, 400, 'attribute_ids[0]: must be a UUID');
    await refused({ website_id: id, filters: f, entity_ids: brand }, 400, 'entity_ids: must be an array of UUIDs');
    await refused(
      { website_id: id, filters: f, entity_ids: [brand, UNKNOWN_ID] },
      400,
      "entity_ids[1]: not the website_id or one of its competitors' ids",
    );
    await refused({ website_id: id, filters: f, entity_ids: [w.a.a1] }, 400, "entity_ids[0]: not the website_id or one of its competitors' ids");
    await refused(
      { website_id: id, filters: f, attribute_ids: [attrs[0], UNKNOWN_ID] },
      400,
      'attribute_ids[1]: no attribute of this website has this id',
    );
    await refused({ website_id: id, filters: f, positive: 'true' }, 400, 'positive: must be a boolean');
    await refused({ website_id: id, filters: f, sort: 'oldest' }, 400, "sort: must be 'intensity' or 'recent'");
  });

  it("given another website's attribute or competitor, then 400", async () => {
    const other = await buildSite(s, w.a.key, {
      competitors: [{ name: 'Elsewhere', url: 'https://elsewhere.example.net' }],
      attributes: [{ name: 'Price' }],
    });
    await refused(
      { website_id: site.id, filters: f, attribute_ids: [other.attributes[0].id] },
      400,
      'attribute_ids[0]: no attribute of this website has this id',
    );
    await refused(
      { website_id: site.id, filters: f, entity_ids: [other.competitors[0].id] },
      400,
      "entity_ids[0]: not the website_id or one of its competitors' ids",
    );
  });

  it('given an unknown, paused or deleted website, then 404 or 403', async () => {
    await refused({ website_id: UNKNOWN_ID, filters: f }, 404, 'Website not found');
    const paused = await buildSite(s, w.a.key);
    expect((await call(s, 'PATCH', `/api/v1/websites/${paused.id}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    await refused({ website_id: paused.id, filters: f }, 403, 'Unauthorized access to this website');
    const deleted = await buildSite(s, w.a.key);
    expect((await call(s, 'DELETE', `/api/v1/websites/${deleted.id}`, { key: w.a.key })).status).toBe(200);
    await refused({ website_id: deleted.id, filters: f }, 403, 'Unauthorized access to this website');
  });

  it('given a scoped key of the website, then it reads it', async () => {
    const r = await post(PATH, { website_id: w.a.a2, filters: f }, w.a.scoped);
    expect(r).toMatchObject({ status: 200, body: { data: [], page_num: 0, page_size: 40, has_more: false } });
  });
});

describe('POST /api/v1/attributes/observations: documented', () => {
  it('given the OpenAPI document, then the endpoint is there as the spec has it (not an extension), its body and answer described', async () => {
    const r = await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key });
    const op = r.body.paths[PATH].post;
    expect(op.tags).not.toContain('extension');
    const body = op.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties).sort()).toEqual(OBSERVATIONS_REQUEST_FIELDS);
    expect(body.required).toEqual(expect.arrayContaining(['website_id', 'filters']));
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.filters.required).toEqual(['start_date']);
    expect(body.properties.filters.additionalProperties).toBe(false);
    expect(Object.keys(body.properties.filters.properties)).not.toContain('competitor_ids');
    expect(Object.keys(op.responses['200'].content['application/json'].schema.properties.data.items.properties)).toHaveLength(12);
  });
});

websiteTenancyChecks(() => w, 'POST', PATH, { filters: { start_date: START } });
