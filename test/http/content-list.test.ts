import { describe, expect, it } from 'vitest';
import { extractUrls, normalizeUrl, tryNormalizeUrl } from '../../src/domain/urls';
import { newSite, refusedWithoutWrite } from '../support/http';
import { call, type TestServer, sharedServer } from '../support/server';
import { importAnswers } from '../support/answers';
import { UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const list = (body: Record<string, unknown>, key = w.a.key) => call(s, 'POST', '/api/v1/content', { key, body });

interface RawAnswer {
  prompt: 'p1' | 'p2';
  run_at: string;
  text: string;
  citations: string[];
}

/** The fixture: five answers; which page each cites and whether it names the brand is written beside it. */
const ANSWERS: RawAnswer[] = [
  // cites guide (tracking parameter, www.); mentions Acme
  { prompt: 'p1', run_at: '2026-03-01T10:00:00Z', text: 'Acme is good.', citations: ['https://www.acme-list.example.com/guide?utm_source=chatgpt'] },
  // cites review (URL in the text, trailing slash); no brand
  { prompt: 'p1', run_at: '2026-03-02T10:00:00Z', text: 'See https://review.example.org/best-tools/ for a list.', citations: [] },
  // cites both (fragment, trailing slash); mentions Acme
  {
    prompt: 'p2',
    run_at: '2026-03-02T11:00:00Z',
    text: 'Acme and others.',
    citations: ['https://review.example.org/best-tools#x', 'https://acme-list.example.com/guide/'],
  },
  // cites neither
  { prompt: 'p2', run_at: '2026-03-03T10:00:00Z', text: 'Nothing to see.', citations: ['https://other.example.net/'] },
  // cites guide (a bare www. link in the text); mentions Acme
  { prompt: 'p1', run_at: '2026-03-03T11:00:00Z', text: 'Docs: www.acme-list.example.com/guide is where Acme keeps them.', citations: [] },
];

/** The reference: every answer's cited normalized URLs (engine citations and URLs in the text), counted by hand. */
function reference(answers: RawAnswer[], url: string, mentioned?: boolean) {
  const selected = answers.filter((a) => mentioned === undefined || /\bAcme\b/.test(a.text) === mentioned);
  const citing = selected.filter((a) =>
    new Set([...a.citations, ...extractUrls(a.text)].flatMap((u) => tryNormalizeUrl(u) ?? [])).has(normalizeUrl(url)),
  );
  const total = selected.length;
  return { citations: citing.length, total_responses: total, citation_percent: total ? Math.round((10000 * citing.length) / total) / 100 : 0 };
}

async function fixture() {
  const site = await newSite(s, w.a.key, 'Acme', 'https://acme-list.example.com');
  const prompts: Record<string, string> = {};
  for (const p of ['p1', 'p2']) {
    const r = await call(s, 'POST', '/api/v1/prompts', { key: w.a.key, body: { website_id: site, text: `question ${p}` } });
    expect(r.status).toBe(201);
    prompts[p] = r.body.prompt.id;
  }
  await importAnswers(
    s,
    w.a.key,
    site,
    ANSWERS.map((a) => ({ prompt_id: prompts[a.prompt], model: 'chatgpt', run_at: a.run_at, text: a.text, citations: a.citations })),
  );
  const tab = (await call(s, 'POST', '/api/v1/content/sheets', { key: w.a.key, body: { website_id: site, name: 'Reviews' } })).body.sheet.sheet_id;
  const own = await call(s, 'POST', '/api/v1/content/track', {
    key: w.a.key,
    body: { website_id: site, urls: [{ url: 'https://acme-list.example.com/guide' }] },
  });
  const third = await call(s, 'POST', '/api/v1/content/track', {
    key: w.a.key,
    body: { website_id: site, sheet_id: tab, urls: [{ url: 'review.example.org/best-tools', title: 'Best tools' }] },
  });
  return { site, prompts, tab, guide: own.body.created[0].content_id as string, review: third.body.created[0].content_id as string };
}

describe('POST /api/v1/content and /content/prompts', () => {
  it('given tracked pages and answers citing them, then each item carries the figures the raw answers give', async () => {
    const f = await fixture();
    const byId = async (body: Record<string, unknown>) => {
      const r = await list({ website_id: f.site, ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return Object.fromEntries(r.body.content.map((x: { content_id: string }) => [x.content_id, x]));
    };
    const all = await byId({});
    // newest first
    expect(Object.keys(all)).toEqual([f.review, f.guide]);
    expect(all[f.guide]).toMatchObject({
      title: 'Guide',
      url: 'acme-list.example.com/guide',
      normalized_url: 'acme-list.example.com/guide',
      type: 'imported',
      stage: null,
      sheet_id: null,
      sheet_name: null,
      topic_name: null,
      ...reference(ANSWERS, 'acme-list.example.com/guide'),
    });
    // by hand: guide 3 of 5, review 2 of 5
    expect(all[f.guide]).toMatchObject({ citations: 3, total_responses: 5, citation_percent: 60 });
    expect(all[f.review]).toMatchObject({ type: 'external', sheet_id: f.tab, sheet_name: 'Reviews', citations: 2, citation_percent: 40 });

    for (const mentioned of [true, false]) {
      const m = await byId({ mentioned });
      expect(m[f.guide]).toMatchObject(reference(ANSWERS, 'acme-list.example.com/guide', mentioned));
      expect(m[f.review]).toMatchObject(reference(ANSWERS, 'review.example.org/best-tools', mentioned));
    }
    expect((await byId({ mentioned: true }))[f.review]).toMatchObject({ citations: 1, total_responses: 3, citation_percent: 33.33 });

    const day2 = await byId({ filters: { start_date: '2026-03-02', end_date: '2026-03-02' } });
    expect(day2[f.guide]).toMatchObject({ citations: 1, total_responses: 2, citation_percent: 50 });
    expect(day2[f.review]).toMatchObject({ citations: 2, total_responses: 2, citation_percent: 100 });
    const p2 = await byId({ filters: { prompt_ids: [f.prompts.p2] } });
    expect(p2[f.guide]).toMatchObject({ citations: 1, total_responses: 2 });

    // the item filters
    expect(Object.keys(await byId({ content_type: 'external' }))).toEqual([f.review]);
    expect(Object.keys(await byId({ content_type: 'imported' }))).toEqual([f.guide]);
    expect(Object.keys(await byId({ content_type: 'generated_any' }))).toEqual([]);
    expect(Object.keys(await byId({ content_type: 'draft' }))).toEqual([]);
    expect(Object.keys(await byId({ sheet_id: f.tab }))).toEqual([f.review]);
    expect(Object.keys(await byId({ stage: 'generated' }))).toEqual([]);
    const page = await list({ website_id: f.site, page_size: 1, page_num: 1 });
    expect(page.body.content.map((x: { content_id: string }) => x.content_id)).toEqual([f.guide]);
    expect(page.body.pagination).toEqual({ page_num: 1, page_size: 1, has_more: false });
    expect((await list({ website_id: f.site, page_size: 1 })).body.pagination.has_more).toBe(true);

    // per prompt: guide is cited by p1 twice (of 3) and by p2 once (of 2)
    const pr = await call(s, 'POST', '/api/v1/content/prompts', { key: w.a.key, body: { website_id: f.site, content_id: f.guide } });
    expect(pr.status, JSON.stringify(pr.body)).toBe(200);
    expect(pr.body).toEqual({
      content_id: f.guide,
      content_url: 'acme-list.example.com/guide',
      content_normalized_url: 'acme-list.example.com/guide',
      prompts: [
        { prompt_id: f.prompts.p1, prompt: 'question p1', citations: 2, citation_percent: 66.67 },
        { prompt_id: f.prompts.p2, prompt: 'question p2', citations: 1, citation_percent: 50 },
      ],
    });
    const prm = await call(s, 'POST', '/api/v1/content/prompts', {
      key: w.a.key,
      body: { website_id: f.site, content_id: f.review, mentioned: false },
    });
    // p1's answers without the brand: only the second, which cites review
    expect(prm.body.prompts).toEqual([{ prompt_id: f.prompts.p1, prompt: 'question p1', citations: 1, citation_percent: 100 }]);

    // answers imported after tracking count too
    await importAnswers(s, w.a.key, f.site, [
      {
        prompt_id: f.prompts.p2,
        model: 'chatgpt',
        run_at: '2026-03-04T10:00:00Z',
        text: 'x',
        citations: ['http://review.example.org/best-tools?utm_campaign=1'],
      },
    ]);
    expect((await byId({}))[f.review]).toMatchObject({ citations: 3, total_responses: 6, citation_percent: 50 });

    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: '/api/v1/content', body: { website_id: f.site, content_type: 'blog' }, status: 400, error: /^content_type/ },
      { method: 'POST', path: '/api/v1/content', body: { website_id: f.site, page_size: 101 }, status: 400, error: /^page_size/ },
      { method: 'POST', path: '/api/v1/content', body: { website_id: f.site, sheet_id: UNKNOWN_ID }, status: 400, error: /^sheet_id/ },
      { method: 'POST', path: '/api/v1/content', body: { website_id: f.site, filters: { nope: 1 } }, status: 400, error: /filters/ },
      { method: 'POST', path: '/api/v1/content', body: { website_id: f.site, mentioned: 'yes' }, status: 400, error: /^mentioned/ },
      {
        method: 'POST',
        path: '/api/v1/content/prompts',
        body: { website_id: f.site, content_id: UNKNOWN_ID },
        status: 404,
        error: 'Content not found',
      },
      { method: 'POST', path: '/api/v1/content/prompts', body: { website_id: w.a.a1, content_id: f.guide }, status: 404, error: 'Content not found' },
    ]);
  });

  it("given another organization's content id, then /content/prompts answers 404", async () => {
    const site = await newSite(s, w.b.key);
    const id = (await call(s, 'POST', '/api/v1/content/track', { key: w.b.key, body: { website_id: site, urls: [{ url: 'b.example.com/x' }] } })).body
      .created[0].content_id;
    const r = await call(s, 'POST', '/api/v1/content/prompts', { key: w.a.key, body: { website_id: w.a.a1, content_id: id } });
    expect(r).toMatchObject({ status: 404, body: { error: 'Content not found' } });
  });

  websiteTenancyChecks(() => w, 'POST', '/api/v1/content');
  websiteTenancyChecks(() => w, 'POST', '/api/v1/content/prompts', { content_id: UNKNOWN_ID });
});
