import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreatePillarAnswer, FactsPage, type FactView, PatchFactAnswer, SearchAnswer } from '../../queries/knowledge/views';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, importAnswers } from '../support/answers';
import { grepDatabase } from '../support/db-grep';
import { jobEnded } from '../support/jobs';
import { offlineResearch } from '../support/knowledge';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';

// Issue 18 "works embedded": the knowledge base as `npm start` runs it with no configuration (event store and read
// models on PGlite, the in-process bus for the research job), whatever DATABASE_URL says: the full-text search
// (tsvector column, GIN index, websearch_to_tsquery), get-or-create, the research job, PATCH and erasure.
let s: TestServer;
let key: string;
beforeAll(async () => {
  s = await startServer({}, {}, undefined, { embedded: true, ...offlineResearch() });
  key = (await s.org('Embedded KB')).key;
}, 180_000);
afterAll(async () => s?.close());

const post = (path: string, body: unknown) => call(s, 'POST', path, { key, body });
const facts = async (query: Record<string, string | number | boolean>) =>
  FactsPage.parse((await call(s, 'GET', '/api/v1/knowledge-base/facts', { key, query })).body).facts;

describe('knowledge base on the embedded store (PGlite, in-process bus)', () => {
  it('given the embedded runtime, then it is PGlite', () => {
    expect(s.rt.database.kind).toBe('pglite');
    expect(s.databaseUrl).toBeNull();
  });

  it('given one pillar name sent at once in several cases, then one pillar; its research runs and it becomes draft with pending candidates', async () => {
    const site = await buildSite(s, key, { name: 'Acme', url: 'https://acme-embedded.example.com' });
    await importAnswers(s, key, site.id, [
      {
        prompt_id: site.prompts[0].id,
        model: MODEL_IDS[0],
        run_at: '2026-03-01T10:00:00.000Z',
        text: 'Acme pricing starts at 10 dollars a seat. Globex is pricier.',
      },
    ]);
    const rs = await Promise.all(
      ['Pricing', 'pricing', 'PRICING '].map((name) => post('/api/v1/knowledge-base/pillars', { website_id: site.id, name })),
    );
    expect(rs.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(rs.filter((r) => r.body.created)).toHaveLength(1);
    const pillar = CreatePillarAnswer.parse(rs.find((r) => r.body.created)!.body).pillar;
    expect(new Set(rs.map((r) => r.body.pillar.id))).toEqual(new Set([pillar.id]));
    expect(await jobEnded(s.rt, pillar.id)).toBe('succeeded');
    const listed = (await call(s, 'GET', '/api/v1/knowledge-base/pillars', { key, query: { website_id: site.id } })).body.pillars;
    expect(listed).toEqual([expect.objectContaining({ id: pillar.id, status: 'draft', last_researched_at: expect.any(String) })]);
    const found = await facts({ website_id: site.id, pillar_id: pillar.id });
    expect(found.map((f) => [f.text, f.source_type, f.review_status])).toEqual([
      ['Acme pricing starts at 10 dollars a seat.', 'ai_response', 'pending'],
    ]);
    expect(found[0].response_id).toEqual(expect.any(String));
  }, 120_000);

  it('given facts, then search ranks approved ones with stemming, PATCH makes a new fact, and a delete erases the texts through a rebuild', async () => {
    const site = (await buildSite(s, key, { name: 'Acme', url: 'https://acme-embedded-facts.example.com' })).id;
    const marker = `kbembedded${randomUUID().slice(0, 8)}`;
    const made = async (text: string, extra: Record<string, unknown> = {}) => {
      const r = await post('/api/v1/knowledge-base/facts', { website_id: site, text, ...extra });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.fact as FactView;
    };
    const best = await made('Acme rockets use green fuel; green fuel rockets are quiet.');
    const weaker = await made('Acme sells rockets and boats, some of them green.');
    const erased = await made(`Acme launch price is ${marker}.`, { source_url: 'https://acme.example.com/price' });

    // search: websearch_to_tsquery on PGlite, English stemming ("rocket" finds "rockets"), best first
    const hits = SearchAnswer.parse(
      (await call(s, 'GET', '/api/v1/knowledge-base/facts/search', { key, query: { website_id: site, query: 'green rocket' } })).body,
    ).facts;
    expect(hits.map((h) => h.id)).toEqual([best.id, weaker.id]);
    expect(hits[0].rank).toBeGreaterThan(hits[1].rank);

    // PATCH: a new text is a new fact, the old one is archived (404); "" clears source_url in place
    const changed = PatchFactAnswer.parse(
      (await call(s, 'PATCH', `/api/v1/knowledge-base/facts/${erased.id}`, { key, body: { text: `Acme launch price is ${marker} now.` } })).body,
    );
    expect(changed.fact.id).not.toBe(erased.id);
    expect(changed.before.id).toBe(erased.id);
    const gone = await call(s, 'PATCH', `/api/v1/knowledge-base/facts/${erased.id}`, { key, body: { confidence: 'low' } });
    expect([gone.status, gone.body]).toEqual([404, { error: 'Fact not found' }]);
    const cleared = await call(s, 'PATCH', `/api/v1/knowledge-base/facts/${changed.fact.id}`, { key, body: { source_url: '' } });
    expect(cleared.body.fact).toMatchObject({ id: changed.fact.id, source_url: null });

    // delete: physical; after every projection is rebuilt the texts are in no column of any table
    const before = await grepDatabase(s.rt.database.db, marker);
    expect(before).toContain('rm_kb_facts.text');
    // the log holds it sealed only
    expect(before.filter((h) => h.startsWith('aivis_events'))).toEqual([]);
    const unknown = randomUUID();
    const del = await post('/api/v1/knowledge-base/facts/delete', { website_id: site, fact_ids: [changed.fact.id, unknown] });
    expect(del.body).toEqual({ success: true, deleted_ids: [changed.fact.id], not_found_ids: [unknown] });
    for (const runner of s.rt.runners.values()) await runner.rebuild();
    expect(await grepDatabase(s.rt.database.db, marker)).toEqual([]);
    expect((await facts({ website_id: site })).map((f) => f.id).sort()).toEqual([best.id, weaker.id].sort());
  }, 150_000);

  it('given an approved fact, when an imported answer contradicts it, then the fact judge (a follower of the log on the one PGlite connection) lists the conflict', async () => {
    const site = await buildSite(s, key, { name: 'Acme', url: 'https://acme-embedded-judge.example.com' });
    const fact = await post('/api/v1/knowledge-base/facts', { website_id: site.id, text: 'Acme Pro costs 49 dollars per month.' });
    expect(fact.status, JSON.stringify(fact.body)).toBe(201);
    const imported = await importAnswers(s, key, site.id, [
      { prompt_id: site.prompts[0].id, model: MODEL_IDS[0], run_at: '2026-03-02T10:00:00.000Z', text: 'Acme Pro costs 99 dollars per month.' },
    ]);
    const conflicts = await until('the conflict', async () => {
      const r = await call(s, 'GET', '/api/v1/knowledge-base/conflicts', { key, query: { website_id: site.id } });
      return r.body.conflicts?.length ? r.body.conflicts : false;
    });
    expect(conflicts).toEqual([
      expect.objectContaining({
        response_id: imported.response_ids[0],
        fact_id: fact.body.fact.id,
        answer_excerpt: 'Acme Pro costs 99 dollars per month.',
      }),
    ]);
  }, 60_000);
});
