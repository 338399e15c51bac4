import { describe, expect, it } from 'vitest';
import { decodeFacts } from '../../src/analysis/facts';
import { utcDay } from '../../src/domain/dates';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, creditsOfRun, finishedRun } from '../support/answers';
import { refusedWithoutWrite } from '../support/http';
import { call, caughtUp, type TestServer, sharedServer } from '../support/server';
import { tenancyChecks, UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';
import { until } from '../support/until';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const post = (path: string, body: unknown, key = w.a.key) => call(s, 'POST', path, { key, body });
const list = (website_id: string, query: Record<string, string | number> = {}) =>
  call(s, 'GET', '/api/v1/responses', { key: w.a.key, query: { website_id, ...query } });

const wholeWord = (text: string, term: string) =>
  new RegExp(`(^|[^\\p{L}\\p{N}_])${term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\p{L}\\p{N}_])`, 'iu').test(text);

describe('runs', () => {
  it('given active prompts, when a run starts, then every prompt x model x location is answered once, analyzed and listed', async () => {
    const site = await buildSite(s, w.a.key, {
      name: 'Acme',
      url: 'https://acme-run.example.com',
      competitors: [{ name: 'Globex', url: 'https://globex.example.net' }],
      prompts: [{ text: 'Best CRM for startups?' }, { text: 'Is Acme any good?', type: 'branded' }, { text: 'Paused one', status: 'paused' }],
      locations: [
        { location: 'Berlin, Germany', country: 'Germany' },
        { location: 'Austin, Texas, United States', country: 'United States' },
      ],
    });
    const start = await post('/api/v1/response-streaming/start', { website_id: site.id });
    expect(start.status).toBe(202);
    expect(start.body).toMatchObject({
      status: 'running',
      schedule: 'default',
      day: utcDay(new Date()),
      models: [...MODEL_IDS],
      total: 2 * MODEL_IDS.length * 2,
    });
    expect(start.body.status_url).toContain(`/api/v1/response-streaming/runs/${start.body.run_id}?website_id=${site.id}`);

    const run = await finishedRun(s, w.a.key, site.id, start.body.run_id);
    expect(run).toMatchObject({ status: 'completed', total: 44, recorded: 44, failed: 0, pending: 0, trigger: 'manual', failures: [] });
    expect(run.finished_at).not.toBeNull();

    const first = await list(site.id, { page_size: 40 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page_num: 0, page_size: 40, has_more: true });
    const second = await list(site.id, { page_size: 40, page_num: 1 });
    expect(second.body.has_more).toBe(false);
    const all = [...first.body.responses, ...second.body.responses];
    expect(all).toHaveLength(44);
    // each unit answered once: prompt x model x location
    const units = new Set(all.map((r) => `${r.prompt_id}/${r.model}/${r.location_id}`));
    expect(units.size).toBe(44);
    expect(new Set(all.map((r) => r.prompt_id))).toEqual(new Set(site.prompts.filter((p) => p.status === 'active').map((p) => p.id)));
    for (const r of all) {
      expect(r).toMatchObject({ website_id: site.id, schedule: 'default', run_id: start.body.run_id });
      expect(MODEL_IDS).toContain(r.model);
      expect(r.prompt).toBe(site.prompts.find((p) => p.id === r.prompt_id)!.text);
      // the brand is mentioned when its name or domain is in the text, whatever the engine wrote
      expect(r.mentioned).toBe(wholeWord(r.response, 'Acme') || r.response.toLowerCase().includes('acme-run.example.com'));
      expect(r.position === null).toBe(!r.mentioned);
      const globex = r.competitors.find((c: { name: string }) => c.name === 'Globex');
      expect(Boolean(globex)).toBe(wholeWord(r.response, 'Globex') || r.response.toLowerCase().includes('globex.example.net'));
      for (const src of r.sources) expect(src.normalized_url).not.toMatch(/^https?:|utm_/);
    }
    // newest first
    const times = all.map((r) => r.created_at);
    expect([...times].sort().reverse()).toEqual(times);

    const range = await call(s, 'GET', '/api/v1/date-range', { key: w.a.key, query: { website_id: site.id } });
    expect(range.body).toEqual({ start_date: utcDay(new Date()), end_date: utcDay(new Date()), schedule: 'default' });
    const manual = await call(s, 'GET', '/api/v1/date-range', { key: w.a.key, query: { website_id: site.id, schedule_id: 'manual' } });
    expect(manual.body).toEqual(range.body);

    // every engine call records its credits
    expect(await creditsOfRun(s.rt.database.db, start.body.run_id)).toBe(44);

    // runs are listed newest first; the start is in the activity feed, and the end the system records once it finished
    const runs = await call(s, 'GET', '/api/v1/response-streaming/runs', { key: w.a.key, query: { website_id: site.id } });
    expect(runs.body.data.map((r: { run_id: string }) => r.run_id)).toEqual([start.body.run_id]);
    const feed = () =>
      s.rt.database
        .db('rm_activity')
        .where({ website_id: site.id, entity_type: 'run' })
        .orderBy('created_at')
        .select('change_type', 'entity_ids', 'via_api_key', 'actor_kind');
    await until('the run end in the feed', async () => (await feed()).length === 2);
    expect(await feed()).toEqual([
      { change_type: 'started', entity_ids: [start.body.run_id], via_api_key: true, actor_kind: 'api_key' },
      { change_type: 'finished', entity_ids: [start.body.run_id], via_api_key: false, actor_kind: 'system' },
    ]);
  });

  it('given a prompt of emoji longer than the simulated engine quotes, when a run starts, then every answer is recorded and quotes whole emoji', async () => {
    const text = `ZM${'😀'.repeat(50)}`;
    const site = await buildSite(s, w.a.key, { prompts: [{ text }] });
    const start = await post('/api/v1/response-streaming/start', { website_id: site.id });
    expect(start.status).toBe(202);
    const run = await finishedRun(s, w.a.key, site.id, start.body.run_id);
    expect(run).toMatchObject({ status: 'completed', total: MODEL_IDS.length, recorded: MODEL_IDS.length, failed: 0, pending: 0 });
    const answers = (await list(site.id, { page_size: 40 })).body.responses;
    expect(answers).toHaveLength(MODEL_IDS.length);
    // the engine quotes 77 characters of a longer prompt: 77 falls inside the 38th emoji
    expect(answers.some((r: { response: string }) => r.response.includes(`"ZM${'😀'.repeat(37)}..."`))).toBe(true);
  });

  it('given a custom schedule, when a run starts for it, then only its models run and its answers carry the schedule', async () => {
    const site = await buildSite(s, w.a.key);
    const sched = await post('/api/v1/prompt-schedules', {
      website_id: site.id,
      name: 'Two',
      models: [MODEL_IDS[2], MODEL_IDS[5]],
      frequency: 'weekly',
    });
    const start = await post('/api/v1/response-streaming/start', { website_id: site.id, schedule_id: sched.body.schedule.id });
    expect(start.status).toBe(202);
    expect(start.body).toMatchObject({ schedule: sched.body.schedule.id, models: [MODEL_IDS[2], MODEL_IDS[5]], total: 2 });
    await finishedRun(s, w.a.key, site.id, start.body.run_id);
    const mine = await list(site.id, { schedule_id: sched.body.schedule.id });
    expect(mine.body.responses.map((r: { model: string }) => r.model).sort()).toEqual([MODEL_IDS[2], MODEL_IDS[5]].sort());
    expect(mine.body.responses.every((r: { schedule: string }) => r.schedule === sched.body.schedule.id)).toBe(true);
    // the default selection does not include another schedule's answers
    expect((await list(site.id)).body.responses).toEqual([]);
    const range = await call(s, 'GET', '/api/v1/date-range', { key: w.a.key, query: { website_id: site.id } });
    expect(range.body).toEqual({ start_date: null, end_date: null, schedule: 'default' });
  });

  it('given bad starts, then 4xx with the reason and nothing written', async () => {
    const site = await buildSite(s, w.a.key);
    const empty = await buildSite(s, w.a.key, { prompts: [{ text: 'only paused', status: 'paused' }] });
    const sched = await post('/api/v1/prompt-schedules', { website_id: site.id, name: 'Old', models: [MODEL_IDS[0]], frequency: 'daily' });
    await call(s, 'PATCH', `/api/v1/prompt-schedules/${sched.body.schedule.id}`, { key: w.a.key, body: { website_id: site.id, archived: true } });
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: '/api/v1/response-streaming/start', body: {}, status: 400, error: 'website_id is required' },
      {
        method: 'POST',
        path: '/api/v1/response-streaming/start',
        body: { website_id: site.id, schedule_id: 'nope' },
        status: 400,
        error: "schedule_id: must be 'default' or a schedule id (UUID)",
      },
      {
        method: 'POST',
        path: '/api/v1/response-streaming/start',
        body: { website_id: site.id, schedule_id: UNKNOWN_ID },
        status: 404,
        error: 'Schedule not found',
      },
      {
        method: 'POST',
        path: '/api/v1/response-streaming/start',
        body: { website_id: site.id, schedule_id: sched.body.schedule.id },
        status: 409,
        error: 'Schedule is archived',
      },
      {
        method: 'POST',
        path: '/api/v1/response-streaming/start',
        body: { website_id: empty.id },
        status: 400,
        error: 'website_id: the website has no active prompts to run',
      },
      {
        method: 'POST',
        path: '/api/v1/response-streaming/start',
        body: { website_id: site.id, extra: 1 },
        status: 400,
        error: 'extra is not allowed',
      },
      { method: 'POST', path: '/api/v1/response-streaming/start', body: { website_id: UNKNOWN_ID }, status: 404, error: 'Website not found' },
      { method: 'GET', path: `/api/v1/response-streaming/runs/${UNKNOWN_ID}`, query: { website_id: site.id }, status: 404, error: 'Run not found' },
    ]);
  });

  it('given a paused website, then its runs and answers are refused with 403', async () => {
    const site = await buildSite(s, w.a.key);
    expect((await call(s, 'PATCH', `/api/v1/websites/${site.id}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: '/api/v1/response-streaming/start',
        body: { website_id: site.id },
        status: 403,
        error: 'Unauthorized access to this website',
      },
      { method: 'GET', path: '/api/v1/responses', query: { website_id: site.id }, status: 403 },
      { method: 'GET', path: '/api/v1/date-range', query: { website_id: site.id }, status: 403 },
    ]);
  });

  it("given another website's run id, then 404 on this website", async () => {
    const a = await buildSite(s, w.a.key);
    const b = await buildSite(s, w.a.key);
    const start = await post('/api/v1/response-streaming/start', { website_id: a.id });
    const r = await call(s, 'GET', `/api/v1/response-streaming/runs/${start.body.run_id}`, { key: w.a.key, query: { website_id: b.id } });
    expect(r).toMatchObject({ status: 404, body: { error: 'Run not found' } });
    await finishedRun(s, w.a.key, a.id, start.body.run_id);
  });

  websiteTenancyChecks(() => w, 'POST', '/api/v1/response-streaming/start');
  tenancyChecks('GET /api/v1/response-streaming/runs/:id', () => w, {
    method: 'GET',
    websiteScoped: true,
    request: (id) => ({ path: `/api/v1/response-streaming/runs/${UNKNOWN_ID}`, query: { website_id: id } }),
  });
  websiteTenancyChecks(() => w, 'GET', '/api/v1/response-streaming/runs');
});

const T0 = '2026-03-01T10:00:00.000Z';

describe('import', () => {
  it('given an answer imported, then the listing shows exactly what analysis finds in it, and adding a competitor re-derives it', async () => {
    const site = await buildSite(s, w.a.key, {
      name: 'Acme',
      url: 'https://www.acme-import.example.com',
      competitors: [{ name: 'Globex', url: 'https://globex-import.example.net', identifiers: ['Globex Corp'] }],
    });
    const text =
      'For a CRM, Globex Corp is the usual pick, but Acme (see https://www.acme-import.example.com/pricing?utm_source=x) is cheaper. Initech is also fine.';
    const imp = await post('/api/v1/responses/import', {
      website_id: site.id,
      responses: [
        {
          external_id: 'ext-1',
          prompt_id: site.prompts[0].id,
          model: MODEL_IDS[0],
          run_at: T0,
          text,
          citations: ['https://blog.globex-import.example.net/review', 'https://www.g2.com/crm?gclid=1'],
          products: [{ name: 'Acme CRM', brand: 'Acme', merchant: 'Shop', price: 10, currency: 'usd', position: 1 }],
        },
      ],
    });
    expect(imp.status).toBe(201);
    expect(imp.body).toEqual({ imported: 1, skipped: 0, response_ids: [expect.any(String)] });
    const id = imp.body.response_ids[0];

    const r = (await list(site.id)).body.responses;
    expect(r).toEqual([
      {
        id,
        website_id: site.id,
        prompt_id: site.prompts[0].id,
        prompt: site.prompts[0].text,
        model: MODEL_IDS[0],
        response: text,
        mentioned: true,
        cited: true,
        position: 2,
        created_at: T0,
        sources: [
          {
            url: 'https://blog.globex-import.example.net/review',
            root_domain: 'example.net',
            normalized_url: 'blog.globex-import.example.net/review',
            suffix: 'net',
          },
          { url: 'https://www.g2.com/crm?gclid=1', root_domain: 'g2.com', normalized_url: 'g2.com/crm', suffix: 'com' },
          {
            url: 'https://www.acme-import.example.com/pricing?utm_source=x',
            root_domain: 'example.com',
            normalized_url: 'acme-import.example.com/pricing',
            suffix: 'com',
          },
        ],
        competitors: [{ id: site.competitors[0].id, name: 'Globex', url: 'https://globex-import.example.net', position: 1 }],
        schedule: 'default',
        location_id: null,
        persona_id: null,
        run_id: null,
        external_id: 'ext-1',
        citations: ['https://blog.globex-import.example.net/review', 'https://www.g2.com/crm?gclid=1'],
        products: [{ name: 'Acme CRM', brand: 'Acme', merchant: 'Shop', price: 10, currency: 'usd', position: 1 }],
        // no pages reported besides the cited ones, no queries
        retrieved: [
          { url: 'https://blog.globex-import.example.net/review', normalized_url: 'blog.globex-import.example.net/review', cited: true },
          { url: 'https://www.g2.com/crm?gclid=1', normalized_url: 'g2.com/crm', cited: true },
          { url: 'https://www.acme-import.example.com/pricing?utm_source=x', normalized_url: 'acme-import.example.com/pricing', cited: true },
        ],
        search_queries: [],
        sample_index: 0,
      },
    ]);
    const facts = async () => {
      const row = await s.rt.database.db('rm_fact_chunks').where({ website_id: site.id }).first('day', 'meta', 'data');
      return { day: row.day, chunk: decodeFacts(row.meta, row.data) };
    };
    let f = await facts();
    expect(f.day).toBe('2026-03-01');
    expect(f.chunk.n).toBe(1);
    expect([...f.chunk.pos]).toEqual([2, 1]);
    expect([...f.chunk.cite]).toEqual([1, 1]);
    expect(f.chunk.t[0]).toBe(10 * 3600 * 1000);

    // a new competitor: positions among all tracked entities change for the whole history
    const added = await post('/api/v1/competitors', { website_id: site.id, name: 'Initech', url: 'https://initech.example.org' });
    await caughtUp(s, ['answers']);
    const after = (await list(site.id)).body.responses[0];
    expect(after.position).toBe(2);
    expect(after.competitors).toEqual([
      { id: site.competitors[0].id, name: 'Globex', url: 'https://globex-import.example.net', position: 1 },
      { id: added.body.competitor.id, name: 'Initech', url: 'https://initech.example.org', position: 3 },
    ]);
    f = await facts();
    expect(f.chunk.entities).toEqual([site.id, site.competitors[0].id, added.body.competitor.id]);
    expect([...f.chunk.pos]).toEqual([2, 1, 3]);
    // the product card's owner is re-derived too
    const card = await s.rt.database.db('rm_response_products').where({ response_id: id }).first('entity_id', 'is_own', 'currency');
    expect(card).toEqual({ entity_id: site.id, is_own: true, currency: 'USD' });

    // a competitor removed: it no longer counts, and positions are renumbered among those left
    await call(s, 'DELETE', `/api/v1/competitors/${site.competitors[0].id}`, { key: w.a.key, query: { website_id: site.id } });
    await caughtUp(s, ['answers']);
    const removed = (await list(site.id)).body.responses[0];
    expect(removed.position).toBe(1);
    expect(removed.competitors).toEqual([{ id: added.body.competitor.id, name: 'Initech', url: 'https://initech.example.org', position: 2 }]);
    f = await facts();
    expect([...f.chunk.pos]).toEqual([1, 2]);
  });

  it('given external ids, then a re-import and a repeat within one call are skipped and keep their ids', async () => {
    const site = await buildSite(s, w.a.key);
    const item = (external_id: string | undefined, text = 'Acme is fine.') => ({
      external_id,
      prompt_id: site.prompts[0].id,
      model: MODEL_IDS[1],
      run_at: T0,
      text,
    });
    const a = await post('/api/v1/responses/import', { website_id: site.id, responses: [item('x1'), item('x2'), item('x1', 'again')] });
    expect(a.body).toMatchObject({ imported: 2, skipped: 1 });
    expect(a.body.response_ids[2]).toBe(a.body.response_ids[0]);
    const b = await post('/api/v1/responses/import', { website_id: site.id, responses: [item('x2'), item('x3'), item(undefined)] });
    expect(b.body).toMatchObject({ imported: 2, skipped: 1 });
    expect(b.body.response_ids[0]).toBe(a.body.response_ids[1]);
    const all = (await list(site.id)).body.responses;
    expect(all).toHaveLength(4);
    expect(all.filter((r: { external_id: string }) => r.external_id === 'x1')).toHaveLength(1);
    // the feed records each import call with what it brought in
    await caughtUp(s, ['activity']);
    const feed = await s.rt.database
      .db('rm_activity')
      .where({ website_id: site.id, entity_type: 'response' })
      .orderBy('seq')
      .select('change_type', 'entity_ids', 'via_api_key');
    expect(feed).toEqual([
      { change_type: 'imported', entity_ids: [a.body.response_ids[0], a.body.response_ids[1]], via_api_key: true },
      { change_type: 'imported', entity_ids: [b.body.response_ids[1], b.body.response_ids[2]], via_api_key: true },
    ]);
  });

  it('given any bad item, then 400 naming it and nothing is imported', async () => {
    const site = await buildSite(s, w.a.key, {
      competitors: [{ name: 'Rival', url: 'https://rival-bad.example.net' }],
      attributes: [{ name: 'Price' }],
    });
    const other = await buildSite(s, w.a.key);
    const ok = { prompt_id: site.prompts[0].id, model: MODEL_IDS[0], run_at: T0, text: 'Fine.' };
    const obs = { entity_id: site.id, attribute_id: site.attributes[0].id, positive: true, score: 0.5, text_span: 'Fine.' };
    const imp = (responses: unknown[]) => ({ method: 'POST', path: '/api/v1/responses/import', body: { website_id: site.id, responses } });
    await refusedWithoutWrite(s, w.a.key, [
      { ...imp([]), status: 400, error: 'responses: must have at least 1 item' },
      { ...imp(Array.from({ length: 1001 }, () => ok)), status: 400, error: 'responses: must have at most 1000 items' },
      { ...imp([ok, { ...ok, prompt_id: other.prompts[0].id }]), status: 400, error: 'responses[1].prompt_id: Prompt not found' },
      { ...imp([{ ...ok, model: 'gpt-9' }]), status: 400, error: /^responses\[0\]\.model: unknown model "gpt-9"/ },
      { ...imp([{ ...ok, run_at: '2026-03-01' }]), status: 400, error: /^responses\[0\]\.run_at: invalid date/ },
      {
        ...imp([{ ...ok, run_at: '2999-01-01T00:00:00Z' }]),
        status: 400,
        error: "responses[0].run_at: must not be more than one day after the server's time",
      },
      {
        ...imp([ok, ok, ok, { ...ok, run_at: new Date(Date.now() + 25 * 3600_000).toISOString() }]),
        status: 400,
        error: "responses[3].run_at: must not be more than one day after the server's time",
      },
      // a time a read model cannot hold (year 0 in UTC) is refused at the command, never handed to a projection
      {
        ...imp([ok, { ...ok, run_at: '0001-01-01T00:00:00+01:00' }]),
        status: 400,
        error: 'responses[1].run_at: must not be before 2000-01-01T00:00:00Z',
      },
      { ...imp([{ ...ok, run_at: '1999-12-31T23:59:59.999Z' }]), status: 400, error: 'responses[0].run_at: must not be before 2000-01-01T00:00:00Z' },
      { ...imp([{ ...ok, text: '   ' }]), status: 400, error: 'responses[0].text: must not be empty' },
      { ...imp([{ ...ok, citations: ['ftp://x.example.com'] }]), status: 400, error: 'responses[0].citations[0]: must be an http(s) URL' },
      { ...imp([{ ...ok, location_id: UNKNOWN_ID }]), status: 400, error: 'responses[0].location_id: Location not found' },
      { ...imp([{ ...ok, products: [{ name: 'X', position: 0 }] }]), status: 400, error: 'responses[0].products[0].position: must be at least 1' },
      {
        ...imp([ok, { ...ok, observations: [{ ...obs, score: -0.5 }] }]),
        status: 400,
        error: 'responses[1].observations[0].score: its sign must match positive (true): above zero',
      },
      {
        ...imp([{ ...ok, observations: [{ ...obs, positive: false, score: 0.4 }] }]),
        status: 400,
        error: 'responses[0].observations[0].score: its sign must match positive (false): below zero',
      },
      {
        ...imp([{ ...ok, observations: [{ ...obs, score: 0.05 }] }]),
        status: 400,
        error: 'responses[0].observations[0].score: must be from -1 to -0.1 or from 0.1 to 1 (magnitude 0.1 to 1.0)',
      },
      {
        ...imp([{ ...ok, observations: [{ ...obs, entity_id: other.id }] }]),
        status: 400,
        error: "responses[0].observations[0].entity_id: must be the website_id (the brand) or one of its competitors' ids",
      },
      {
        ...imp([{ ...ok, observations: [{ ...obs, attribute_id: UNKNOWN_ID }] }]),
        status: 400,
        error: 'responses[0].observations[0].attribute_id: Attribute not found',
      },
      { ...imp([{ ...ok, surprise: 1 }]), status: 400, error: 'responses[0].surprise is not allowed' },
    ]);
    expect((await list(site.id)).body.responses).toEqual([]);
  });

  it('given answer times at the edges of the accepted range, then they are imported and listed as given', async () => {
    const site = await buildSite(s, w.a.key);
    const soon = new Date(Math.floor((Date.now() + 23 * 3600_000) / 1000) * 1000).toISOString();
    const item = (run_at: string) => ({ prompt_id: site.prompts[0].id, model: MODEL_IDS[0], run_at, text: 'Acme.' });
    const r = await post('/api/v1/responses/import', {
      website_id: site.id,
      responses: [item('2000-01-01T00:00:00Z'), item('2000-01-01T01:00:00+01:00'), item(soon)],
    });
    expect(r.status).toBe(201);
    const listed = (await list(site.id)).body.responses.map((x: { created_at: string }) => x.created_at).sort();
    expect(listed).toEqual(['2000-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z', soon]);
  });

  it('given observations in an import, then they are stored as given and the extractor leaves those answers alone', async () => {
    const site = await buildSite(s, w.a.key, {
      competitors: [{ name: 'Rival', url: 'https://rival-obs.example.net' }],
      attributes: [{ name: 'Price' }, { name: 'Support' }],
    });
    const [price, support] = site.attributes;
    const r = await post('/api/v1/responses/import', {
      website_id: site.id,
      responses: [
        {
          prompt_id: site.prompts[0].id,
          model: MODEL_IDS[3],
          run_at: '2026-03-02T08:30:15.750Z',
          text: 'Acme is cheap. Rival support is slow.',
          observations: [
            { entity_id: site.id, attribute_id: price.id, positive: true, score: 0.7, text_span: 'Acme is cheap.' },
            { entity_id: site.competitors[0].id, attribute_id: support.id, positive: false, text_span: 'Rival support is slow.' },
          ],
        },
        { prompt_id: site.prompts[0].id, model: MODEL_IDS[3], run_at: T0, text: 'Acme is very affordable and its customer support is excellent.' },
      ],
    });
    expect(r.status).toBe(201);
    const rows = await s.rt.database
      .db('rm_observations')
      .where({ response_id: r.body.response_ids[0] })
      .orderBy('intensity')
      .select('entity_id', 'attribute_id', 'positive', 'score', 'text_span', 'model', 'extractor', 'created_at');
    expect(rows).toEqual([
      {
        entity_id: site.id,
        attribute_id: price.id,
        positive: true,
        score: 0.7,
        text_span: 'Acme is cheap.',
        model: MODEL_IDS[3],
        extractor: 'import',
        created_at: new Date('2026-03-02T08:30:15.000Z'),
      },
      {
        entity_id: site.competitors[0].id,
        attribute_id: support.id,
        positive: false,
        score: null,
        text_span: 'Rival support is slow.',
        model: MODEL_IDS[3],
        extractor: 'import',
        created_at: new Date('2026-03-02T08:30:15.000Z'),
      },
    ]);
    // the answer without observations is read by the extractor
    const found = await until('observations extracted', async () => {
      const x = await s.rt.database
        .db('rm_observations')
        .where({ response_id: r.body.response_ids[1] })
        .select('entity_id', 'attribute_id', 'positive', 'score', 'extractor');
      return x.length > 0 && x;
    });
    expect(found.every((o: { entity_id: string; extractor: string }) => o.entity_id === site.id && o.extractor === 'rules')).toBe(true);
    expect(found.every((o: { positive: boolean; score: number | null }) => o.score === null || o.score > 0 === o.positive)).toBe(true);
    expect(new Set(found.map((o: { attribute_id: string }) => o.attribute_id))).toEqual(new Set([price.id, support.id]));
  });

  tenancyChecks('POST /api/v1/responses/import', () => w, {
    method: 'POST',
    websiteScoped: true,
    request: (id) => ({
      path: '/api/v1/responses/import',
      body: { website_id: id, responses: [{ prompt_id: UNKNOWN_ID, model: MODEL_IDS[0], run_at: T0, text: 'x' }] },
    }),
  });
});

describe('listing', () => {
  it('given answers across models, days and schedules, then the filters select exactly the matching ones', async () => {
    const site = await buildSite(s, w.a.key, {
      prompts: [{ text: 'one' }, { text: 'two', type: 'branded' }, { text: 'three', status: 'paused' }],
      locations: [{ location: 'Paris', country: 'France' }],
    });
    const sched = await post('/api/v1/prompt-schedules', { website_id: site.id, name: 'S', models: [MODEL_IDS[0]], frequency: 'daily' });
    const [p1, p2, p3] = site.prompts;
    const loc = site.locations[0].id;
    const item = (prompt: { id: string }, model: string, run_at: string, extra: object = {}) => ({
      prompt_id: prompt.id,
      model,
      run_at,
      text: 'Acme.',
      ...extra,
    });
    const imp = await post('/api/v1/responses/import', {
      website_id: site.id,
      responses: [
        item(p1, MODEL_IDS[0], '2026-03-01T00:00:00Z'),
        item(p1, MODEL_IDS[1], '2026-03-01T23:59:59.999Z'),
        item(p2, MODEL_IDS[0], '2026-03-02T12:00:00Z', { location_id: loc }),
        item(p3, MODEL_IDS[2], '2026-03-03T12:00:00Z'),
        item(p1, MODEL_IDS[0], '2026-03-03T13:00:00Z', { schedule_id: sched.body.schedule.id }),
      ],
    });
    expect(imp.status).toBe(201);
    const ids = imp.body.response_ids as string[];
    const got = async (query: Record<string, string>) => {
      const r = await list(site.id, query);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.responses as { id: string }[]).map((x) => x.id).sort();
    };
    const expectIds = (...i: number[]) => i.map((k) => ids[k]).sort();
    expect(await got({})).toEqual(expectIds(0, 1, 2, 3));
    expect(await got({ schedule_id: sched.body.schedule.id })).toEqual(expectIds(4));
    expect(await got({ start_date: '2026-03-02', end_date: '2026-03-03' })).toEqual(expectIds(2, 3));
    expect(await got({ end_date: '2026-03-01' })).toEqual(expectIds(0, 1));
    expect(await got({ start_date: '2026-03-01T12:00:00Z', end_date: '2026-03-02T12:00:00Z' })).toEqual(expectIds(1, 2));
    expect(await got({ models: `${MODEL_IDS[1]},${MODEL_IDS[2]}` })).toEqual(expectIds(1, 3));
    expect(await got({ prompt_ids: p1.id })).toEqual(expectIds(0, 1));
    expect(await got({ prompt_status: 'paused' })).toEqual(expectIds(3));
    expect(await got({ prompt_type: 'branded' })).toEqual(expectIds(2));
    const body = await post('/api/v1/responses', { website_id: site.id, filters: { location_ids: [loc] } });
    expect(body.body.responses.map((x: { id: string }) => x.id)).toEqual(expectIds(2));

    // a soft-deleted prompt's answers no longer count
    await call(s, 'DELETE', `/api/v1/prompts/${p3.id}`, { key: w.a.key, query: { website_id: site.id } });
    expect(await got({})).toEqual(expectIds(0, 1, 2));

    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/responses', status: 400, error: 'website_id is required' },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, models: 'gpt-9' },
        status: 400,
        error: /^models\[0\]: unknown model "gpt-9"/,
      },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, start_date: 'yesterday' },
        status: 400,
        error: /^start_date: invalid date/,
      },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, start_date: '2026-03-03', end_date: '2026-03-01' },
        status: 400,
        error: /^end_date: is before start_date/,
      },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, location_ids: loc },
        status: 400,
        error: 'location_ids: must be sent in the body as filters.location_ids (POST /api/v1/responses)',
      },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, prompt_ids: UNKNOWN_ID },
        status: 400,
        error: 'prompt_ids[0]: no prompt of this website has this id',
      },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, schedule_id: UNKNOWN_ID },
        status: 400,
        error: 'schedule_id: no schedule of this website has this id',
      },
      {
        method: 'GET',
        path: '/api/v1/responses',
        query: { website_id: site.id, page_size: '101' },
        status: 400,
        error: 'page_size: must be between 1 and 100',
      },
      { method: 'GET', path: '/api/v1/responses', query: { website_id: site.id, sentiment: 'x' }, status: 400, error: 'sentiment is not allowed' },
      {
        method: 'POST',
        path: '/api/v1/responses',
        body: { website_id: site.id, filters: { location_ids: [UNKNOWN_ID] } },
        status: 400,
        error: 'filters.location_ids[0]: no location of this website has this id',
      },
      {
        method: 'POST',
        path: '/api/v1/responses',
        body: { website_id: site.id, filters: { bogus: 1 } },
        status: 400,
        error: 'filters.bogus is not allowed',
      },
      {
        method: 'GET',
        path: '/api/v1/date-range',
        query: { website_id: site.id, schedule_id: UNKNOWN_ID },
        status: 404,
        error: 'Schedule not found',
      },
    ]);
  });

  websiteTenancyChecks(() => w, 'GET', '/api/v1/responses');
  websiteTenancyChecks(() => w, 'POST', '/api/v1/responses');
  websiteTenancyChecks(() => w, 'GET', '/api/v1/date-range');
});
