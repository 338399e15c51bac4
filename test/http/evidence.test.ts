import { describe, expect, it } from 'vitest';
import { buildSite, everyListedAnswer, finishedRun, importAnswers, type Site } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const get = (path: string, query: Record<string, string | number>, key = w.a.key) => call(s, 'GET', path, { key, query });

/** Given: a brand on acme-ev.example.com and a competitor on globex-ev.example.net, one prompt. */
async function evidenceSite(): Promise<Site> {
  return buildSite(s, w.a.key, {
    name: 'Acme',
    url: 'https://acme-ev.example.com',
    competitors: [{ name: 'Globex', url: 'https://www.globex-ev.example.net' }],
    prompts: [{ text: 'Best CRM?' }, { text: 'Cheapest CRM?' }],
  });
}

const answer = (prompt_id: string, over: Record<string, unknown> = {}) => ({
  prompt_id,
  model: 'chatgpt',
  run_at: '2026-11-10T10:00:00Z',
  text: 'Some tools compare well.',
  ...over,
});

/** The export as sent (a stream of NDJSON or CSV, not one JSON body: read as text, not through call()). */
async function exportCall(query: Record<string, string | number>, key = w.a.key) {
  const u = new URL('/api/v1/responses/export', s.url);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
  const r = await fetch(u, { headers: { 'x-api-key': key } });
  return { status: r.status, text: await r.text(), headers: r.headers };
}

/** The export's body split into records (NDJSON) and its next cursor. */
async function exported(websiteId: string, query: Record<string, string | number> = {}) {
  const r = await exportCall({ website_id: websiteId, ...query });
  expect(r.status, r.text).toBe(200);
  const lines = r.text.split('\n').filter(Boolean);
  return { records: lines.map((l) => JSON.parse(l)), next: r.headers.get('x-next-cursor')!, headers: r.headers };
}

describe('answer evidence on answers', () => {
  it('given an imported answer with retrieved pages and queries, when listed, then each normalized URL is retrieved once, cited ones marked, and its queries shown', async () => {
    const site = await evidenceSite();
    await importAnswers(s, w.a.key, site.id, [
      answer(site.prompts[0].id, {
        text: 'See https://acme-ev.example.com/pricing for more.',
        citations: ['https://www.globex-ev.example.net/crm?utm_source=x'],
        retrieved: ['https://globex-ev.example.net/crm', 'https://g2.com/crm/', 'https://acme-ev.example.com/pricing'],
        search_queries: ['best crm', ' Best CRM ', 'crm pricing'],
      }),
    ]);
    const r = await get('/api/v1/responses', { website_id: site.id });
    expect(r.status).toBe(200);
    const [a] = r.body.responses;
    expect(a.retrieved).toEqual([
      { url: 'https://www.globex-ev.example.net/crm?utm_source=x', normalized_url: 'globex-ev.example.net/crm', cited: true },
      { url: 'https://acme-ev.example.com/pricing', normalized_url: 'acme-ev.example.com/pricing', cited: true },
      { url: 'https://g2.com/crm/', normalized_url: 'g2.com/crm', cited: false },
    ]);
    expect(a.search_queries).toEqual(['best crm', 'crm pricing']);
  });

  it('given an answer imported without evidence, when listed, then retrieved holds its cited URLs and search_queries is empty', async () => {
    const site = await evidenceSite();
    await importAnswers(s, w.a.key, site.id, [answer(site.prompts[0].id, { citations: ['https://g2.com/x'] })]);
    const [a] = (await get('/api/v1/responses', { website_id: site.id })).body.responses;
    expect(a.retrieved).toEqual([{ url: 'https://g2.com/x', normalized_url: 'g2.com/x', cited: true }]);
    expect(a.search_queries).toEqual([]);
  });

  it.each([
    [
      'retrieved',
      { retrieved: Array.from({ length: 501 }, (_, i) => `https://x.example.com/${i}`) },
      'responses[0].retrieved: must have at most 500 items',
    ],
    ['search_queries', { search_queries: Array.from({ length: 51 }, (_, i) => `q${i}`) }, 'responses[0].search_queries: must have at most 50 items'],
    ['a non-URL in retrieved', { retrieved: ['https://ok.example.com', 'not a url'] }, 'responses[0].retrieved[1]: must be an http(s) URL'],
  ])('given an import item with too much or bad evidence (%s), then 400 naming the field and nothing written', async (_n, over, message) => {
    const site = await evidenceSite();
    const before = await s.head();
    const r = await call(s, 'POST', '/api/v1/responses/import', {
      key: w.a.key,
      body: { website_id: site.id, responses: [answer(site.prompts[0].id, over)] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe(message);
    expect(await s.head()).toBe(before);
  });
});

describe('a run of the simulated engines', () => {
  it('given a run, then search-backed answers list the pages they read beyond their citations and their queries, and sources count them', async () => {
    const site = await evidenceSite();
    const start = await call(s, 'POST', '/api/v1/response-streaming/start', { key: w.a.key, body: { website_id: site.id } });
    expect(start.status).toBe(202);
    await finishedRun(s, w.a.key, site.id, start.body.run_id);
    const listed: {
      model: string;
      retrieved: { cited: boolean; normalized_url: string }[];
      search_queries: string[];
      sources: { normalized_url: string }[];
    }[] = await everyListedAnswer(s, w.a.key, site.id);
    const perplexity = listed.filter((a) => a.model === 'perplexity');
    expect(perplexity.length).toBeGreaterThan(0);
    for (const a of perplexity) {
      expect(a.retrieved.some((r) => !r.cited)).toBe(true);
      expect(a.search_queries.length).toBeGreaterThan(0);
      // every cited source is retrieved, marked cited
      expect(a.retrieved.filter((r) => r.cited).map((r) => r.normalized_url)).toEqual(a.sources.map((x) => x.normalized_url));
    }
    const mistral = listed.find((a) => a.model === 'mistral')!;
    expect(mistral.search_queries).toEqual([]);
    expect(mistral.retrieved.every((r) => r.cited)).toBe(true);
    let retrievedTotal = 0;
    for (let page_num = 0; ; page_num++) {
      const r = await get('/api/v1/sources', { website_id: site.id, group_by: 'url', page_size: 100, page_num });
      retrievedTotal += r.body.data.reduce((n: number, x: { retrieved: number }) => n + x.retrieved, 0);
      if (!r.body.has_more) break;
    }
    expect(retrievedTotal).toBe(listed.reduce((n, a) => n + a.retrieved.length, 0));
    // the engines' answers export as they list
    const byId = (xs: { id: string }[]) => new Map(xs.map((x) => [x.id, x]));
    expect(byId((await exported(site.id)).records)).toEqual(byId(listed as unknown as { id: string }[]));
  });
});

describe('GET /api/v1/sources', () => {
  it('given answers retrieving and citing pages, when grouped by domain and by URL, then answers are counted once each, with the rate and the entity', async () => {
    const site = await evidenceSite();
    const p = site.prompts[0].id;
    await importAnswers(s, w.a.key, site.id, [
      // cites globex, retrieves two g2 pages and acme
      answer(p, {
        citations: ['https://globex-ev.example.net/a'],
        retrieved: ['https://g2.com/one', 'https://g2.com/two', 'https://blog.acme-ev.example.com/post'],
      }),
      // cites g2 (one), retrieves globex
      answer(p, { model: 'claude', citations: ['https://g2.com/one'], retrieved: ['https://www.globex-ev.example.net/a'] }),
      // another day, only g2 retrieved
      answer(p, { run_at: '2026-11-12T10:00:00Z', retrieved: ['https://g2.com/one'] }),
    ]);
    const byDomain = await get('/api/v1/sources', { website_id: site.id });
    expect(byDomain.status).toBe(200);
    expect(byDomain.body).toEqual({
      data: [
        { domain: 'g2.com', retrieved: 3, cited: 1, cited_when_retrieved: 100 / 3, is_self: false, entity_id: null },
        { domain: 'globex-ev.example.net', retrieved: 2, cited: 1, cited_when_retrieved: 50, is_self: false, entity_id: site.competitors[0].id },
        { domain: 'blog.acme-ev.example.com', retrieved: 1, cited: 0, cited_when_retrieved: 0, is_self: true, entity_id: site.id },
      ],
      page_num: 0,
      page_size: 40,
      has_more: false,
    });
    const byUrl = await get('/api/v1/sources', { website_id: site.id, group_by: 'url', page_size: 2 });
    expect(byUrl.body).toEqual({
      data: [
        { url: 'g2.com/one', retrieved: 3, cited: 1, cited_when_retrieved: 100 / 3, is_self: false, entity_id: null },
        { url: 'globex-ev.example.net/a', retrieved: 2, cited: 1, cited_when_retrieved: 50, is_self: false, entity_id: site.competitors[0].id },
      ],
      page_num: 0,
      page_size: 2,
      has_more: true,
    });
    const next = await get('/api/v1/sources', { website_id: site.id, group_by: 'url', page_size: 2, page_num: 1 });
    expect(next.body.data.map((x: { url: string }) => x.url)).toEqual(['blog.acme-ev.example.com/post', 'g2.com/two']);
    expect(next.body.has_more).toBe(false);

    // the model and date filters select answers
    const claude = await get('/api/v1/sources', { website_id: site.id, models: 'claude' });
    expect(claude.body.data).toEqual([
      { domain: 'g2.com', retrieved: 1, cited: 1, cited_when_retrieved: 100, is_self: false, entity_id: null },
      { domain: 'globex-ev.example.net', retrieved: 1, cited: 0, cited_when_retrieved: 0, is_self: false, entity_id: site.competitors[0].id },
    ]);
    const later = await get('/api/v1/sources', { website_id: site.id, start_date: '2026-11-11', end_date: '2026-11-30' });
    expect(later.body.data).toEqual([{ domain: 'g2.com', retrieved: 1, cited: 0, cited_when_retrieved: 0, is_self: false, entity_id: null }]);
  });

  it.each([
    [{ group_by: 'host' }, 'group_by'],
    [{ models: 'nope' }, 'models'],
    [{ start_date: 'soon' }, 'start_date'],
    [{ page_size: 101 }, 'page_size'],
  ])('given bad input %o, then 400 naming %s', async (q, field) => {
    const r = await get('/api/v1/sources', { website_id: w.a.a1, ...q });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(new RegExp(`^${field}`));
  });
});

describe('GET /api/v1/search-queries', () => {
  it('given answers with queries, then queries are merged case-insensitively, keep their first spelling, and count answers, models and times', async () => {
    const site = await evidenceSite();
    const [p1, p2] = site.prompts.map((x) => x.id);
    await importAnswers(s, w.a.key, site.id, [
      answer(p1, { run_at: '2026-11-10T10:00:00Z', search_queries: ['Best CRM', 'crm pricing'] }),
      answer(p1, { run_at: '2026-11-11T10:00:00Z', model: 'claude', search_queries: ['best crm '] }),
      answer(p2, { run_at: '2026-11-12T10:00:00Z', model: 'gemini', search_queries: ['cheap crm', 'BEST CRM'] }),
    ]);
    const all = await get('/api/v1/search-queries', { website_id: site.id });
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual([
      {
        query: 'Best CRM',
        answers: 3,
        models: ['chatgpt', 'claude', 'gemini'],
        first_seen: '2026-11-10T10:00:00.000Z',
        last_seen: '2026-11-12T10:00:00.000Z',
      },
      { query: 'cheap crm', answers: 1, models: ['gemini'], first_seen: '2026-11-12T10:00:00.000Z', last_seen: '2026-11-12T10:00:00.000Z' },
      { query: 'crm pricing', answers: 1, models: ['chatgpt'], first_seen: '2026-11-10T10:00:00.000Z', last_seen: '2026-11-10T10:00:00.000Z' },
    ]);
    const one = await get('/api/v1/search-queries', { website_id: site.id, prompt_id: p1, end_date: '2026-11-10' });
    expect(one.body.data.map((x: { query: string; answers: number }) => [x.query, x.answers])).toEqual([
      ['Best CRM', 1],
      ['crm pricing', 1],
    ]);
  });
});

describe('GET /api/v1/responses/export', () => {
  it('given answers, when exported in pages with the cursor, then each comes once in a stable order, and after returns only what was recorded since', async () => {
    const site = await evidenceSite();
    const p = site.prompts[0].id;
    await importAnswers(
      s,
      w.a.key,
      site.id,
      Array.from({ length: 5 }, (_, i) =>
        answer(p, {
          run_at: `2026-11-0${i + 1}T10:00:00Z`,
          text: `Answer ${i} names Globex and Acme, see https://www.acme-ev.example.com/x?utm_source=y.`,
          citations: [`https://g2.com/${i}`],
          retrieved: ['https://reddit.com/r/crm/', `https://g2.com/${i}`],
          search_queries: ['crm "quoted" \\ query'],
          products: [{ name: 'Acme One', brand: 'Acme', price: 9.5, currency: 'USD', position: 1 }],
        }),
      ),
    );
    const whole = await exported(site.id);
    expect(whole.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(whole.records).toHaveLength(5);
    const listed = (await get('/api/v1/responses', { website_id: site.id })).body.responses;
    // a record is the listing's item
    expect(new Map(whole.records.map((r: { id: string }) => [r.id, r]))).toEqual(new Map(listed.map((r: { id: string }) => [r.id, r])));

    const first = await exported(site.id, { limit: 2 });
    const second = await exported(site.id, { limit: 2, after: first.next });
    const third = await exported(site.id, { limit: 2, after: second.next });
    expect([...first.records, ...second.records, ...third.records].map((r) => r.id)).toEqual(whole.records.map((r: { id: string }) => r.id));
    const none = await exported(site.id, { after: whole.next });
    expect(none.records).toEqual([]);
    expect(none.next).toBe(whole.next);

    await importAnswers(s, w.a.key, site.id, [answer(p, { text: 'A new one.' })]);
    const since = await exported(site.id, { after: whole.next });
    expect(since.records.map((r: { response: string }) => r.response)).toEqual(['A new one.']);
  });

  it('given a synced export, when a competitor is added (history re-derived), then every answer comes again with its new analysis', async () => {
    const site = await evidenceSite();
    await importAnswers(s, w.a.key, site.id, [answer(site.prompts[0].id, { text: 'Initech is fine.' }), answer(site.prompts[1].id)]);
    const synced = await exported(site.id);
    expect(synced.records).toHaveLength(2);
    const add = await call(s, 'POST', '/api/v1/competitors', {
      key: w.a.key,
      body: { website_id: site.id, name: 'Initech', url: 'https://initech.example.org' },
    });
    expect(add.status).toBe(201);
    let again: Awaited<ReturnType<typeof exported>> | undefined;
    for (let i = 0; i < 100 && !(again?.records.length === 2); i++) {
      if (i) await new Promise((r) => setTimeout(r, 100));
      again = await exported(site.id, { after: synced.next });
    }
    expect(again!.records).toHaveLength(2);
    const initech = again!.records.find((r: { response: string }) => r.response === 'Initech is fine.');
    expect(initech.competitors.map((c: { name: string }) => c.name)).toEqual(['Initech']);
    expect((await exported(site.id, { after: again!.next })).records).toEqual([]);
  });

  /** Five answers exported once, then the history re-derived (a competitor added): the site and the old cursor. */
  async function rederivedSite() {
    const site = await evidenceSite();
    const p = site.prompts[0].id;
    await importAnswers(
      s,
      w.a.key,
      site.id,
      Array.from({ length: 5 }, (_, i) => answer(p, { run_at: `2026-11-0${i + 1}T10:00:00Z`, text: `Answer ${i}, Initech too.` })),
    );
    const synced = await exported(site.id);
    const add = await call(s, 'POST', '/api/v1/competitors', {
      key: w.a.key,
      body: { website_id: site.id, name: 'Initech', url: 'https://initech.example.org' },
    });
    expect(add.status).toBe(201);
    for (let i = 0; i < 100 && (await exported(site.id, { after: synced.next })).records.length < 5; i++)
      await new Promise((r) => setTimeout(r, 100));
    return { site, synced };
  }

  it('given a re-derived history, when synced again in pages from the old cursor while an answer is recorded, then each answer comes once in the order of a whole export, the new one last', async () => {
    const { site, synced } = await rederivedSite();
    const whole = await exported(site.id);
    const ids: string[] = [];
    let after = synced.next;
    for (let i = 0; i < 10; i++) {
      const page = await exported(site.id, { limit: 2, after });
      ids.push(...page.records.map((r: { id: string }) => r.id));
      after = page.next;
      if (i === 0) await importAnswers(s, w.a.key, site.id, [answer(site.prompts[1].id, { text: 'Recorded mid-sync.' })]);
      if (!page.records.length) break;
    }
    expect(ids.slice(0, 5)).toEqual(whole.records.map((r: { id: string }) => r.id));
    expect(ids).toHaveLength(6);
    expect(new Set(ids).size).toBe(6);
    expect((await exported(site.id, { after })).records).toEqual([]);
  });

  it('given a cursor of the earlier form inside a re-derived history (its answers in id order), when followed, then the rest of them come in id order, then newer answers, each once', async () => {
    const { site } = await rederivedSite();
    await importAnswers(s, w.a.key, site.id, [answer(site.prompts[1].id, { text: 'Recorded after.' })]);
    const ids = (await exported(site.id)).records.map((r: { id: string; response: string }) => r);
    const older = ids.filter((r) => r.response !== 'Recorded after.').map((r) => r.id);
    const newer = ids.find((r) => r.response === 'Recorded after.')!.id;
    const { rederived } = await s.rt.database.db('rm_fact_sites').where('website_id', site.id).first('rederived');
    const byId = [...older].sort();
    // the client had the first two answers by id when the cursor was handed out as `epoch.id`
    let after = Buffer.from(`${rederived}.${byId[1]}`).toString('base64url');
    const got: string[] = [];
    for (let i = 0; i < 10; i++) {
      const page = await exported(site.id, { limit: 2, after });
      if (!page.records.length) break;
      got.push(...page.records.map((r: { id: string }) => r.id));
      after = page.next;
    }
    expect(got).toEqual([...byId.slice(2), newer]);
  });

  it('given answers, when exported as CSV, then a header row of the listing keys and one row per answer, lists as JSON', async () => {
    const site = await evidenceSite();
    await importAnswers(s, w.a.key, site.id, [
      answer(site.prompts[0].id, { text: 'Line one, "quoted"\nline two', citations: ['https://g2.com/a'], search_queries: ['q'] }),
    ]);
    const r = await exportCall({ website_id: site.id, format: 'csv' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    const text = r.text;
    const header = text.split('\n')[0].split(',');
    expect(header.slice(0, 3)).toEqual(['id', 'website_id', 'prompt_id']);
    expect(header).toContain('retrieved');
    expect(header).toContain('search_queries');
    expect(text).toContain('"Line one, ""quoted""\nline two"');
    expect(text).toContain('"[""q""]"');
    expect(r.headers.get('x-next-cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it.each([
    [{ limit: 100001 }, 'limit'],
    [{ limit: 0 }, 'limit'],
    [{ format: 'xml' }, 'format'],
    [{ after: 'not a cursor!' }, 'after'],
    [{ after: Buffer.from('12.nope').toString('base64url') }, 'after'],
  ])('given bad input %o, then 400 naming %s', async (q, field) => {
    const r = await get('/api/v1/responses/export', { website_id: w.a.a1, ...q });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(new RegExp(`^${field}`));
  });
});

describe('tenancy', () => {
  websiteTenancyChecks(() => w, 'GET', '/api/v1/sources');
  websiteTenancyChecks(() => w, 'GET', '/api/v1/search-queries');
  websiteTenancyChecks(() => w, 'GET', '/api/v1/responses/export');
});
