import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { approvedFactsByIds } from '../../queries/knowledge/knowledge';
import { CreatePillarAnswer, FactsPage, type FactView, PatchFactAnswer, SearchAnswer } from '../../queries/knowledge/views';
import { newSite, postCreated, type Refusal, refusedWithoutWrite } from '../support/http';
import { jobEnded } from '../support/jobs';
import { offlineResearch, researched } from '../support/knowledge';
import { call, caughtUp, startServer, type TestServer } from '../support/server';
import { useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld(
  (ctx) => ({ s, w } = ctx),
  () => startServer({}, {}, undefined, offlineResearch()),
);

const NOT_ENABLED = 'Knowledge base is not enabled for this organization';
/** The refusal of a key that does not reach the website. */
const OUTSIDE = { status: 403, error: 'Unauthorized access to this website' } as const;
/** Creates a pillar and lets its research end (it writes in the background: a refusal's check of the log's head would see it). */
const pillar = async (key: string, body: unknown) => {
  const r = await call(s, 'POST', '/api/v1/knowledge-base/pillars', { key, body });
  if (r.status === 200 && r.body.created) await jobEnded(s.rt, r.body.pillar.id);
  return r;
};
const fact = (key: string, body: unknown) => call(s, 'POST', '/api/v1/knowledge-base/facts', { key, body });
/** A manual fact of org A's website, made over REST (201): the fact. */
const newFact = async (website_id: string, text: string) =>
  (await postCreated(s, w.a.key, '/api/v1/knowledge-base/facts', { website_id, text })).fact;
const facts = (key: string, query: Record<string, string | number | boolean>) => call(s, 'GET', '/api/v1/knowledge-base/facts', { key, query });
const patch = (key: string, id: string, body: unknown) => call(s, 'PATCH', `/api/v1/knowledge-base/facts/${id}`, { key, body });
/** A change of fact `id` to `text` that is refused 409 with `error` (the reason its text may not be replaced). */
const textChangeRefused = (id: string, text: string, error: string): Refusal => ({
  method: 'PATCH',
  path: `/api/v1/knowledge-base/facts/${id}`,
  body: { text },
  status: 409,
  error,
});
const review = (key: string, id: string, decision: string) =>
  call(s, 'POST', `/api/v1/knowledge-base/facts/${id}/review`, { key, body: { decision } });
const search = (key: string, website_id: string, query: string, limit?: number) =>
  call(s, 'GET', '/api/v1/knowledge-base/facts/search', { key, query: { website_id, query, limit } });
const del = (key: string, website_id: string, fact_ids: string[]) =>
  call(s, 'POST', '/api/v1/knowledge-base/facts/delete', { key, body: { website_id, fact_ids } });

describe('pillars', () => {
  it('given a new name, when a pillar is created, then it is researching and created; the same name in another case answers it with created false', async () => {
    const site = await newSite(s, w.a.key);
    const r = await pillar(w.a.key, { website_id: site, name: 'Pricing & Plans', description: 'What it costs' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const a = CreatePillarAnswer.parse(r.body);
    expect(a).toMatchObject({ created: true, pillar: { name: 'Pricing & Plans', description: 'What it costs', status: 'researching' } });
    const again = await pillar(w.a.key, { website_id: site, name: '  pricing & PLANS ' });
    expect(again.status).toBe(200);
    // (its research may have moved it to draft meanwhile)
    expect(again.body).toMatchObject({ created: false, pillar: { id: a.pillar.id, name: 'Pricing & Plans', created_at: a.pillar.created_at } });
    const list = await call(s, 'GET', '/api/v1/knowledge-base/pillars', { key: w.a.key, query: { website_id: site } });
    expect(list.body.pillars.map((p: { id: string }) => p.id)).toEqual([a.pillar.id]);
    // names are per website
    const other = await pillar(w.a.key, { website_id: await newSite(s, w.a.key), name: 'Pricing & Plans' });
    expect(other.body.created).toBe(true);
    expect(other.body.pillar.id).not.toBe(a.pillar.id);
  });

  it('given many creates of one name at once, then one pillar exists and exactly one answer says created', async () => {
    const site = await newSite(s, w.a.key);
    const rs = await Promise.all(
      ['Security', 'security', 'SECURITY ', ' Security', 'securitY', 'Security'].map((name) => pillar(w.a.key, { website_id: site, name })),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(rs.filter((r) => r.body.created)).toHaveLength(1);
    expect(new Set(rs.map((r) => r.body.pillar.id)).size).toBe(1);
    const created = await s.rt.database.db('aivis_events').where('type', 'PillarCreated').whereRaw(`data->>'website_id' = ?`, [site]);
    expect(created).toHaveLength(1);
  });

  it('given a pillar, when patched, then only the given fields change; a name another pillar has is 409', async () => {
    const site = await newSite(s, w.a.key);
    const p1 = (await pillar(w.a.key, { website_id: site, name: 'Support' })).body.pillar;
    await pillar(w.a.key, { website_id: site, name: 'Integrations' });
    const r = await call(s, 'PATCH', `/api/v1/knowledge-base/pillars/${p1.id}`, { key: w.a.key, body: { status: 'published', description: 'Help' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.pillar).toMatchObject({ id: p1.id, name: 'Support', description: 'Help', status: 'published' });
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'PATCH',
        path: `/api/v1/knowledge-base/pillars/${p1.id}`,
        body: { name: 'INTEGRATIONS' },
        status: 409,
        error: 'Pillar name already exists',
      },
      { method: 'PATCH', path: `/api/v1/knowledge-base/pillars/${randomUUID()}`, body: { name: 'X' }, status: 404, error: 'Pillar not found' },
      { method: 'PATCH', path: `/api/v1/knowledge-base/pillars/${p1.id}`, body: { status: 'gone' }, status: 400, error: /^status: / },
      { method: 'PATCH', path: `/api/v1/knowledge-base/pillars/${p1.id}`, body: {}, status: 400, error: /^name: / },
    ]);
    // another organization's pillar id is not found
    await refusedWithoutWrite(s, w.b.key, [
      { method: 'PATCH', path: `/api/v1/knowledge-base/pillars/${p1.id}`, body: { name: 'Mine' }, status: 404, error: 'Pillar not found' },
    ]);
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: '/api/v1/knowledge-base/pillars', body: { website_id: w.a.a1 }, status: 400, error: /^name/ },
      { method: 'POST', path: '/api/v1/knowledge-base/pillars', body: { website_id: w.a.a1, name: '' }, status: 400, error: /^name: / },
      { method: 'POST', path: '/api/v1/knowledge-base/pillars', body: { website_id: 'nope', name: 'A' }, status: 400, error: /^website_id: / },
      { method: 'POST', path: '/api/v1/knowledge-base/pillars', body: { website_id: w.a.a1, name: 'A', extra: 1 }, status: 400 },
      { method: 'POST', path: '/api/v1/knowledge-base/pillars', body: { website_id: randomUUID(), name: 'A' }, status: 404 },
    ]);
  });
});

describe('the gates', () => {
  let off: { key: string };
  let offSite: string;
  beforeAll(async () => {
    off = await s.org('No KB', { features: ['pitch'] });
    offSite = await newSite(s, off.key);
  });

  it('given an organization without the knowledge base, then every endpoint answers 403 with the message and writes nothing', async () => {
    const id = randomUUID();
    await refusedWithoutWrite(
      s,
      off.key,
      (
        [
          { method: 'POST', path: '/api/v1/knowledge-base/pillars', body: { website_id: offSite, name: 'A' } },
          { method: 'GET', path: '/api/v1/knowledge-base/pillars', query: { website_id: offSite } },
          { method: 'PATCH', path: `/api/v1/knowledge-base/pillars/${id}`, body: { name: 'B' } },
          { method: 'POST', path: '/api/v1/knowledge-base/facts', body: { website_id: offSite, text: 'A fact' } },
          { method: 'GET', path: '/api/v1/knowledge-base/facts', query: { website_id: offSite } },
          { method: 'GET', path: '/api/v1/knowledge-base/facts/search', query: { website_id: offSite, query: 'price' } },
          { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${id}`, body: { text: 'B' } },
          { method: 'POST', path: `/api/v1/knowledge-base/facts/${id}/review`, body: { decision: 'approve' } },
          { method: 'POST', path: '/api/v1/knowledge-base/facts/delete', body: { website_id: offSite, fact_ids: [id] } },
        ] as Omit<Refusal, 'status'>[]
      ).map((c) => ({ ...c, status: 403, error: NOT_ENABLED })),
    );
  });

  it("given a key scoped to another website, then a fact of this website is 403 and another organization's fact is 404", async () => {
    const f = (await fact(w.a.key, { website_id: w.a.a1, text: 'Acme was founded in 1999.' })).body.fact;
    await refusedWithoutWrite(s, w.a.scoped, [
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${f.id}`, body: { text: 'Changed' }, ...OUTSIDE },
      { method: 'POST', path: `/api/v1/knowledge-base/facts/${f.id}/review`, body: { decision: 'reject' }, status: 403 },
      { method: 'POST', path: '/api/v1/knowledge-base/facts/delete', body: { website_id: w.a.a1, fact_ids: [f.id] }, status: 403 },
    ]);
    await refusedWithoutWrite(s, w.b.key, [
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${f.id}`, body: { text: 'Changed' }, status: 404, error: 'Fact not found' },
      { method: 'POST', path: `/api/v1/knowledge-base/facts/${f.id}/review`, body: { decision: 'reject' }, status: 404, error: 'Fact not found' },
    ]);
    // deleting another organization's fact from one's own website: not found, and the fact is still there
    const r = await del(w.b.key, w.b.b1, [f.id]);
    expect(r.body).toEqual({ success: true, deleted_ids: [], not_found_ids: [f.id] });
    expect((await facts(w.a.key, { website_id: w.a.a1 })).body.facts.map((x: FactView) => x.id)).toContain(f.id);
  });

  it('given a key scoped to the website, then it is a website admin there; a paused website answers 403', async () => {
    const r = await pillar(w.a.scoped, { website_id: w.a.a2, name: 'Scoped pillar' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const f = await fact(w.a.scoped, { website_id: w.a.a2, text: 'Scoped fact.' });
    expect(f.status).toBe(201);
    expect((await patch(w.a.scoped, f.body.fact.id, { confidence: 'low' })).status).toBe(200);
    expect((await del(w.a.scoped, w.a.a2, [f.body.fact.id])).body.deleted_ids).toEqual([f.body.fact.id]);
    const paused = await newSite(s, w.a.key);
    const pf = (await fact(w.a.key, { website_id: paused, text: 'Paused fact.' })).body.fact;
    expect((await call(s, 'PATCH', `/api/v1/websites/${paused}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/knowledge-base/facts', query: { website_id: paused }, ...OUTSIDE },
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${pf.id}`, body: { text: 'x' }, ...OUTSIDE },
    ]);
  });

  it("given another website of the same organization, then its pillars and facts are not this website's: 403 for a key outside it, 404 / not_found_ids / nothing listed for a key inside", async () => {
    const p1 = (await pillar(w.a.key, { website_id: w.a.a1, name: 'Other website pillar' })).body.pillar;
    const f1 = (await fact(w.a.key, { website_id: w.a.a1, text: 'Acme a1 has a fact.', pillar_id: p1.id })).body.fact;
    // a key scoped to a2 reaches neither a1's pillar nor a1's facts, by id or by website
    await refusedWithoutWrite(s, w.a.scoped, [
      { method: 'PATCH', path: `/api/v1/knowledge-base/pillars/${p1.id}`, body: { status: 'published' }, ...OUTSIDE },
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${f1.id}`, body: { confidence: 'low' }, ...OUTSIDE },
      { method: 'GET', path: '/api/v1/knowledge-base/facts', query: { website_id: w.a.a1, pillar_id: p1.id }, status: 403 },
    ]);
    // naming a1's pillar or fact while addressing a2 (a key that reaches both): not found there, nothing listed or changed
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: '/api/v1/knowledge-base/facts',
        body: { website_id: w.a.a2, text: 'Filed under a1.', pillar_id: p1.id },
        status: 404,
        error: 'Pillar not found',
      },
    ]);
    expect((await facts(w.a.key, { website_id: w.a.a2, pillar_id: p1.id })).body.facts).toEqual([]);
    expect((await del(w.a.key, w.a.a2, [f1.id])).body).toEqual({ success: true, deleted_ids: [], not_found_ids: [f1.id] });
    expect((await facts(w.a.key, { website_id: w.a.a1, pillar_id: p1.id })).body.facts.map((x: FactView) => x.id)).toEqual([f1.id]);
    // the scoped key's own website is unaffected by a1's pillar names: the same name there is a new pillar
    const mine = await pillar(w.a.scoped, { website_id: w.a.a2, name: 'OTHER WEBSITE PILLAR' });
    expect(mine.body).toMatchObject({ created: true });
    expect(mine.body.pillar.id).not.toBe(p1.id);
  });

  websiteTenancyChecks(() => w, 'POST', '/api/v1/knowledge-base/pillars', { name: 'Tenancy' });
  websiteTenancyChecks(() => w, 'GET', '/api/v1/knowledge-base/pillars');
  websiteTenancyChecks(() => w, 'POST', '/api/v1/knowledge-base/facts', { text: 'Tenancy fact' });
  websiteTenancyChecks(() => w, 'GET', '/api/v1/knowledge-base/facts');
  websiteTenancyChecks(() => w, 'GET', '/api/v1/knowledge-base/facts/search', { query: 'tenancy' });
  websiteTenancyChecks(() => w, 'POST', '/api/v1/knowledge-base/facts/delete', { fact_ids: [randomUUID()] });
});

describe('facts', () => {
  it('given a manual fact, then it is approved, listed, and filed under its pillar; unfiled lists the others', async () => {
    const site = await newSite(s, w.a.key);
    const p = (await pillar(w.a.key, { website_id: site, name: 'Company' })).body.pillar;
    const filed = await fact(w.a.key, {
      website_id: site,
      text: 'Acme has 200 employees.',
      pillar_id: p.id,
      source_url: 'https://acme.example.com/about',
    });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    expect(filed.body.fact).toMatchObject({
      website_id: site,
      pillar_id: p.id,
      text: 'Acme has 200 employees.',
      source_url: 'https://acme.example.com/about',
      source_quote: null,
      confidence: 'high',
      review_status: 'approved',
      source_type: 'manual',
      response_id: null,
      duplicate_of: null,
    });
    const loose = (await fact(w.a.key, { website_id: site, text: 'Acme ships worldwide.', confidence: 'low' })).body.fact;
    expect(loose.pillar_id).toBeNull();
    const all = FactsPage.parse((await facts(w.a.key, { website_id: site })).body);
    expect(all.facts.map((f) => f.id)).toEqual([loose.id, filed.body.fact.id]);
    expect((await facts(w.a.key, { website_id: site, pillar_id: p.id })).body.facts.map((f: FactView) => f.id)).toEqual([filed.body.fact.id]);
    expect((await facts(w.a.key, { website_id: site, unfiled: true })).body.facts.map((f: FactView) => f.id)).toEqual([loose.id]);
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: '/api/v1/knowledge-base/facts',
        body: { website_id: site, text: 'x', pillar_id: randomUUID() },
        status: 404,
        error: 'Pillar not found',
      },
      { method: 'POST', path: '/api/v1/knowledge-base/facts', body: { website_id: site, text: '  ' }, status: 400, error: /^text: / },
      {
        method: 'POST',
        path: '/api/v1/knowledge-base/facts',
        body: { website_id: site, text: 'x', source_url: 'ftp://x' },
        status: 400,
        error: /^source_url: /,
      },
      {
        method: 'POST',
        path: '/api/v1/knowledge-base/facts',
        body: { website_id: site, text: 'x', confidence: 'sure' },
        status: 400,
        error: /^confidence: /,
      },
      { method: 'GET', path: '/api/v1/knowledge-base/facts', query: { website_id: site, page_size: '101' }, status: 400, error: /^page_size: / },
      {
        method: 'GET',
        path: '/api/v1/knowledge-base/facts',
        query: { website_id: site, review_status: 'maybe' },
        status: 400,
        error: /^review_status: /,
      },
      {
        method: 'GET',
        path: '/api/v1/knowledge-base/facts',
        query: { website_id: site, pillar_id: p.id, unfiled: 'true' },
        status: 400,
        error: /^unfiled: /,
      },
    ]);
  });

  it('given facts of several kinds, then review_status, include_oracle, hidden duplicates and paging select them', async () => {
    const site = await newSite(s, w.a.key);
    const p = (await pillar(w.a.key, { website_id: site, name: 'Product' })).body.pillar;
    const [answer] = await researched(s, w.a.organization_id, site, p.id, [{ text: 'Acme sells rockets.' }]);
    const [oracle] = await researched(s, w.a.organization_id, site, p.id, [{ text: 'Acme is often compared with Bravo.', source_type: 'oracle' }]);
    const [dup] = await researched(s, w.a.organization_id, site, p.id, [{ text: 'acme sells rockets', source_type: 'site', response_id: null }]);
    const listed = async (q: Record<string, string | number | boolean>) =>
      (await facts(w.a.key, { website_id: site, ...q })).body.facts.map((f: FactView) => f.id).sort();
    expect(await listed({})).toEqual([answer].sort());
    expect(await listed({ include_oracle: true })).toEqual([answer, oracle].sort());
    expect(await listed({ include_duplicates: true })).toEqual([answer, dup].sort());
    const d = (await facts(w.a.key, { website_id: site, include_duplicates: true, review_status: 'pending' })).body.facts.find(
      (f: FactView) => f.id === dup,
    );
    expect(d).toMatchObject({ duplicate_of: answer, source_type: 'site', review_status: 'pending' });
    expect(await listed({ review_status: 'approved' })).toEqual([]);
    for (let i = 0; i < 3; i++) await fact(w.a.key, { website_id: site, text: `Paged fact ${i}` });
    const p0 = (await facts(w.a.key, { website_id: site, page_size: 2 })).body;
    const p1 = (await facts(w.a.key, { website_id: site, page_size: 2, page_num: 1 })).body;
    expect(p0).toMatchObject({ page_num: 0, page_size: 2, has_more: true });
    expect(p1).toMatchObject({ page_num: 1, page_size: 2, has_more: false });
    expect([...p0.facts, ...p1.facts].map((f: FactView) => f.text)).toEqual(['Paged fact 2', 'Paged fact 1', 'Paged fact 0', 'Acme sells rockets.']);
  });

  it('given pending facts, when reviewed, then approve and reject set the status; a hidden duplicate cannot be reviewed', async () => {
    const site = await newSite(s, w.a.key);
    const p = (await pillar(w.a.key, { website_id: site, name: 'Reviews' })).body.pillar;
    const [f1, f2, dup] = await researched(s, w.a.organization_id, site, p.id, [
      { text: 'Acme offers a free trial.' },
      { text: 'Acme is based in Paris.' },
      { text: 'Acme offers a free trial!' },
    ]);
    expect((await review(w.a.key, f1, 'approve')).body.fact).toMatchObject({ id: f1, review_status: 'approved' });
    expect((await review(w.a.key, f2, 'reject')).body.fact).toMatchObject({ id: f2, review_status: 'rejected' });
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: `/api/v1/knowledge-base/facts/${dup}/review`,
        body: { decision: 'approve' },
        status: 409,
        error: 'Hidden duplicate facts cannot be reviewed',
      },
      { method: 'POST', path: `/api/v1/knowledge-base/facts/${f1}/review`, body: { decision: 'maybe' }, status: 400, error: /^decision: / },
      {
        method: 'POST',
        path: `/api/v1/knowledge-base/facts/${randomUUID()}/review`,
        body: { decision: 'approve' },
        status: 404,
        error: 'Fact not found',
      },
    ]);
    // the same decision again changes nothing
    const before = await s.head();
    expect((await review(w.a.key, f1, 'approve')).status).toBe(200);
    expect(await s.head()).toBe(before);
  });

  it('given approved, pending and rejected facts, when searched, then only approved ones come back, best match first', async () => {
    const site = await newSite(s, w.a.key);
    const p = (await pillar(w.a.key, { website_id: site, name: 'Search' })).body.pillar;
    const best = await newFact(site, 'Acme rockets use green fuel; green fuel rockets are quiet.');
    const weaker = (
      await fact(w.a.key, { website_id: site, text: 'Acme sells rockets and boats. Its boats are made in Norway and ship with a green flag.' })
    ).body.fact;
    await fact(w.a.key, { website_id: site, text: 'Acme has an office in Lyon.' });
    const [pending, rejected] = await researched(s, w.a.organization_id, site, p.id, [
      { text: 'Rockets with green fuel are pending.' },
      { text: 'Rejected rockets with green fuel.' },
    ]);
    await review(w.a.key, rejected, 'reject');
    const r = await search(w.a.key, site, 'green rockets');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const hits = SearchAnswer.parse(r.body).facts;
    expect(hits.map((h) => h.id)).toEqual([best.id, weaker.id]);
    expect(hits[0].rank).toBeGreaterThan(hits[1].rank);
    expect(hits.map((h) => h.id)).not.toContain(pending);
    // web-search syntax and stemming: "rocket" finds "rockets"; -boats excludes
    expect((await search(w.a.key, site, 'rocket -boats')).body.facts.map((h: FactView) => h.id)).toEqual([best.id]);
    expect((await search(w.a.key, site, 'rockets', 1)).body.facts).toHaveLength(1);
    expect((await search(w.a.key, site, 'submarine')).body.facts).toEqual([]);
    // another website's facts are not searched
    expect((await search(w.a.key, await newSite(s, w.a.key), 'green rockets')).body.facts).toEqual([]);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/knowledge-base/facts/search', query: { website_id: site }, status: 400, error: /^query/ },
      {
        method: 'GET',
        path: '/api/v1/knowledge-base/facts/search',
        query: { website_id: site, query: 'x', limit: '51' },
        status: 400,
        error: /^limit: /,
      },
    ]);
  });
});

describe('PATCH a fact', () => {
  let site: string;
  let p: { id: string };
  beforeAll(async () => {
    site = await newSite(s, w.a.key);
    p = (await pillar(w.a.key, { website_id: site, name: 'Edits' })).body.pillar;
  });

  it('given a text change, then a new fact with a new id keeps pillar, provenance and review status, and the old one is archived (404)', async () => {
    const [oracle] = await researched(s, w.a.organization_id, site, p.id, [
      { text: 'Acme was founded in 1998.', source_type: 'oracle', source_url: 'https://acme.example.com/history' },
    ]);
    const r = await patch(w.a.key, oracle, { text: 'Acme was founded in 1999.' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const a = PatchFactAnswer.parse(r.body);
    expect(a.fact.id).not.toBe(oracle);
    expect(a.before).toMatchObject({ id: oracle, text: 'Acme was founded in 1998.' });
    expect(a.fact).toMatchObject({
      text: 'Acme was founded in 1999.',
      pillar_id: p.id,
      source_type: 'oracle',
      review_status: 'pending',
      response_id: a.before.response_id,
      source_url: 'https://acme.example.com/history',
      source_quote: 'Acme was founded in 1998.',
      confidence: 'medium',
    });
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${oracle}`, body: { confidence: 'high' }, status: 404, error: 'Fact not found' },
      { method: 'POST', path: `/api/v1/knowledge-base/facts/${oracle}/review`, body: { decision: 'approve' }, status: 404, error: 'Fact not found' },
    ]);
    const listed = (await facts(w.a.key, { website_id: site, include_oracle: true })).body.facts.map((f: FactView) => f.id);
    expect(listed).toContain(a.fact.id);
    expect(listed).not.toContain(oracle);
    // deleting the archived one: not found
    expect((await del(w.a.key, site, [oracle])).body).toEqual({ success: true, deleted_ids: [], not_found_ids: [oracle] });
  });

  it('given source_url or confidence alone, then the same fact changes in place; "" clears source_url; only supplied fields change', async () => {
    const f = (await fact(w.a.key, { website_id: site, text: 'Acme has 3 offices.', source_url: 'https://a.example.com/x', confidence: 'medium' }))
      .body.fact;
    const r1 = await patch(w.a.key, f.id, { confidence: 'low' });
    expect(r1.status).toBe(200);
    expect(r1.body.fact).toMatchObject({ id: f.id, confidence: 'low', source_url: 'https://a.example.com/x', text: 'Acme has 3 offices.' });
    expect(r1.body.before).toMatchObject({ id: f.id, confidence: 'medium' });
    const r2 = await patch(w.a.key, f.id, { source_url: '' });
    expect(r2.body.fact).toMatchObject({ id: f.id, source_url: null, confidence: 'low' });
    const r3 = await patch(w.a.key, f.id, { source_url: 'https://b.example.com/y', text: 'Acme has 3 offices.' });
    expect(r3.body.fact).toMatchObject({ id: f.id, source_url: 'https://b.example.com/y' });
    // a text change with a source_url: the new fact carries both
    const r4 = await patch(w.a.key, f.id, { text: 'Acme has 4 offices.', source_url: '' });
    expect(r4.body.fact).toMatchObject({
      text: 'Acme has 4 offices.',
      source_url: null,
      confidence: 'low',
      review_status: 'approved',
      source_type: 'manual',
    });
    expect(r4.body.fact.id).not.toBe(f.id);
  });

  it('given facts captured from answers, hidden duplicates or rejected facts, then a text change is 409 and nothing is written', async () => {
    const [captured, rejected, dupOf, dup] = await researched(s, w.a.organization_id, site, p.id, [
      { text: 'Acme answers support calls in 2 minutes.' },
      { text: 'Acme is the cheapest.', source_type: 'site', response_id: null },
      { text: 'Acme runs on solar power.', source_type: 'site', response_id: null },
      { text: 'ACME runs on solar power', source_type: 'site', response_id: null },
    ]);
    expect(dupOf).toBeDefined();
    await review(w.a.key, rejected, 'reject');
    await refusedWithoutWrite(s, w.a.key, [
      textChangeRefused(captured, 'Other', 'Facts captured from AI responses cannot have their text changed'),
      textChangeRefused(rejected, 'Other', 'Rejected facts cannot have their text changed'),
      textChangeRefused(dup, 'Other', 'Hidden duplicate facts cannot have their text changed'),
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${captured}`, body: {}, status: 400, error: /^text: / },
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${captured}`, body: { source_url: 'nope' }, status: 400, error: /^source_url: / },
      { method: 'PATCH', path: `/api/v1/knowledge-base/facts/${randomUUID()}`, body: { text: 'Other' }, status: 404, error: 'Fact not found' },
    ]);
    // their source_url and confidence still change in place
    expect((await patch(w.a.key, captured, { confidence: 'high' })).body.fact).toMatchObject({ id: captured, confidence: 'high' });
  });

  it('given two facts from the same answer, when one takes the text of the other, then 409; from another answer it is allowed', async () => {
    const response_id = randomUUID();
    const [a, b] = await researched(s, w.a.organization_id, site, p.id, [
      { text: 'Acme has a mobile app.', source_type: 'oracle', response_id },
      { text: 'Acme has a desktop app.', source_type: 'oracle', response_id },
    ]);
    const [c] = await researched(s, w.a.organization_id, site, p.id, [{ text: 'Acme has a web app.', source_type: 'oracle' }]);
    await refusedWithoutWrite(s, w.a.key, [
      textChangeRefused(b, 'acme has a mobile app', 'Another fact captured from the same response already has this text'),
    ]);
    expect((await patch(w.a.key, c, { text: 'Acme has a mobile app.' })).status).toBe(200);
    expect((await patch(w.a.key, a, { text: 'Acme has a tablet app.' })).status).toBe(200);
  });

  it('given two text changes of one fact at once, then one wins and the other finds it archived (404)', async () => {
    const f = await newFact(site, 'Acme has 10 products.');
    const rs = await Promise.all([patch(w.a.key, f.id, { text: 'Acme has 11 products.' }), patch(w.a.key, f.id, { text: 'Acme has 12 products.' })]);
    expect(rs.map((r) => r.status).sort()).toEqual([200, 404]);
    expect(await s.rt.database.db('aivis_events').where('type', 'FactArchived').whereRaw(`data->>'fact_id' = ?`, [f.id])).toHaveLength(1);
  });
});

describe('delete facts', () => {
  it('given 1 to 50 ids, then known ones are deleted for good and unknown ones listed in not_found_ids', async () => {
    const site = await newSite(s, w.a.key);
    const f1 = await newFact(site, 'Delete me one.');
    const f2 = await newFact(site, 'Delete me two.');
    const keep = await newFact(site, 'Keep me.');
    const unknown = randomUUID();
    const r = await del(w.a.key, site, [f1.id, unknown, f2.id]);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ success: true, deleted_ids: [f1.id, f2.id], not_found_ids: [unknown] });
    expect((await facts(w.a.key, { website_id: site })).body.facts.map((f: FactView) => f.id)).toEqual([keep.id]);
    expect((await patch(w.a.key, f1.id, { confidence: 'low' })).status).toBe(404);
    // deleting again: not found
    expect((await del(w.a.key, site, [f1.id])).body).toEqual({ success: true, deleted_ids: [], not_found_ids: [f1.id] });
    const ids = Array.from({ length: 51 }, () => randomUUID());
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: '/api/v1/knowledge-base/facts/delete', body: { website_id: site, fact_ids: [] }, status: 400, error: /^fact_ids: / },
      { method: 'POST', path: '/api/v1/knowledge-base/facts/delete', body: { website_id: site, fact_ids: ids }, status: 400, error: /^fact_ids: / },
      {
        method: 'POST',
        path: '/api/v1/knowledge-base/facts/delete',
        body: { website_id: site, fact_ids: ['x'] },
        status: 400,
        error: /^fact_ids\[0\]: /,
      },
    ]);
    expect((await del(w.a.key, site, ids.slice(0, 50))).body.not_found_ids).toHaveLength(50);
  });
});

describe('activity', () => {
  it('given pillar and fact changes, then each is in the activity feed with its ids', async () => {
    const site = await newSite(s, w.a.key);
    const p = (await pillar(w.a.key, { website_id: site, name: 'Feed' })).body.pillar;
    await call(s, 'PATCH', `/api/v1/knowledge-base/pillars/${p.id}`, { key: w.a.key, body: { status: 'published' } });
    const f = await newFact(site, 'Feed fact.');
    await patch(w.a.key, f.id, { confidence: 'low' });
    const changed = (await patch(w.a.key, f.id, { text: 'Feed fact, changed.' })).body.fact;
    await review(w.a.key, changed.id, 'reject');
    await review(w.a.key, changed.id, 'approve');
    await review(w.a.key, changed.id, 'reject');
    await del(w.a.key, site, [changed.id]);
    await caughtUp(s, ['activity']);
    const r = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, order: 'asc' } });
    expect(r.status).toBe(200);
    const entries = r.body.data
      .filter((e: { entity_type: string }) => e.entity_type === 'pillar' || e.entity_type === 'fact')
      .map((e: { entity_type: string; change_type: string; entity_ids: string[] }) => [e.entity_type, e.change_type, e.entity_ids]);
    expect(entries).toEqual([
      ['pillar', 'created', [p.id]],
      ['pillar', 'researched', [p.id]],
      ['pillar', 'updated', [p.id]],
      ['fact', 'created', [f.id]],
      ['fact', 'updated', [f.id]],
      ['fact', 'updated', [changed.id, f.id]],
      ['fact', 'archived', [f.id]],
      ['fact', 'rejected', [changed.id]],
      ['fact', 'approved', [changed.id]],
      ['fact', 'rejected', [changed.id]],
      ['fact', 'deleted', [changed.id]],
    ]);
  });
});

describe('approved facts for grounded generation', () => {
  it('given facts of every status, then approvedFactsByIds answers the approved ones in the order asked and names every other id', async () => {
    const site = await newSite(s, w.a.key);
    const p = (await pillar(w.a.key, { website_id: site, name: 'Grounding' })).body.pillar;
    const ok1 = await newFact(site, 'Grounded one.');
    const ok2 = await newFact(site, 'Grounded two.');
    const [pending, rejected] = await researched(s, w.a.organization_id, site, p.id, [{ text: 'Pending fact.' }, { text: 'Rejected fact.' }]);
    await review(w.a.key, rejected, 'reject');
    const archived = await newFact(site, 'Old text.');
    const current = (await patch(w.a.key, archived.id, { text: 'New text.' })).body.fact;
    const deleted = await newFact(site, 'Deleted fact.');
    await del(w.a.key, site, [deleted.id]);
    const elsewhere = (await fact(w.a.key, { website_id: w.a.a1, text: 'Another website.' })).body.fact;
    const unknown = randomUUID();
    const r = await approvedFactsByIds(s.rt.database.db, site, [
      ok2.id,
      pending,
      ok1.id,
      rejected,
      archived.id,
      current.id,
      deleted.id,
      elsewhere.id,
      unknown,
      'not-a-uuid',
      ok2.id,
    ]);
    expect(r.facts.map((f) => f.id)).toEqual([ok2.id, ok1.id, current.id]);
    expect(r.not_approved_ids).toEqual([pending, rejected, archived.id, deleted.id, elsewhere.id, unknown, 'not-a-uuid']);
  });
});

describe('the OpenAPI document', () => {
  it("given the document, then every knowledge-base route is in it, the spec's untagged and ours tagged extension", async () => {
    const r = await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key });
    expect(r.status).toBe(200);
    const tags = (path: string, method: string) => r.body.paths[path]?.[method]?.tags as string[] | undefined;
    const spec: [string, string][] = [
      ['/api/v1/knowledge-base/pillars', 'post'],
      ['/api/v1/knowledge-base/facts', 'get'],
      ['/api/v1/knowledge-base/facts/search', 'get'],
      ['/api/v1/knowledge-base/facts/{fact_id}', 'patch'],
      ['/api/v1/knowledge-base/facts/delete', 'post'],
    ];
    const ours: [string, string][] = [
      ['/api/v1/knowledge-base/pillars', 'get'],
      ['/api/v1/knowledge-base/pillars/{pillar_id}', 'patch'],
      ['/api/v1/knowledge-base/facts', 'post'],
      ['/api/v1/knowledge-base/facts/{fact_id}/review', 'post'],
    ];
    for (const [path, method] of spec) {
      expect(tags(path, method), `${method} ${path}`).toContain('knowledge base');
      expect(tags(path, method), `${method} ${path}`).not.toContain('extension');
    }
    for (const [path, method] of ours)
      expect(tags(path, method), `${method} ${path}`).toEqual(expect.arrayContaining(['knowledge base', 'extension']));
  });
});
