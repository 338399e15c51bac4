import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decideCreateFact } from '../../commands/knowledge/facts';
import { Knowledge, knowledgeStream } from '../../commands/knowledge/knowledge';
import { handle } from '../../commands/handle';
import { SeoJobView } from '../../queries/seo/views';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { seoJob } from '../../src/workers/seo';
import { newSite } from '../support/http';
import { researched } from '../support/knowledge';
import { useInstanceOverNats } from '../support/nats-instances';
import { call, caughtUp, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { until } from '../support/until';

let s: TestServer;
let w: World;
const dbRef = {} as { db: import('knex').Knex };

useInstanceOverNats(
  () => ({ app: { seo: { organizationPerMinute: 100_000, websitePerMinute: 100_000 } }, runtime: { jobs: { specs: [seoJob(dbRef)] } } }),
  async (ctx) => {
    s = ctx.s;
    dbRef.db = s.rt.database.db;
    w = await buildWorld(s);
  },
);

/** A draft about running shoes for flat feet that states the arch-support fact and nothing about returns or materials. */
const draft = {
  title: 'Running shoes for flat feet',
  body: '# Running shoes for flat feet\n\nAcme running shoes give arch support for flat feet.\n\n## Stability\n\nStability shoes keep flat feet from rolling inward.',
};
const STATED = 'Acme running shoes give arch support for flat feet.';
const LACKING_HIGH = 'Acme running shoes for flat feet come with a 90-day free return policy.';
const LACKING_MEDIUM = 'Acme running shoes are made from recycled ocean plastic.';
const UNRELATED = 'Acme was founded in Oslo in 1998.';
const PENDING = 'Acme running shoes ship free to Norway within two days.';
const PENDING_ORACLE = 'Acme running shoes weigh under two hundred grams.';
const REJECTED = 'Acme running shoes cost 120 dollars a pair.';
const ARCHIVED = 'Acme running shoes carry a lifetime warranty.';
const DELETED = 'Acme running shoes are certified vegan by PETA.';
const OTHER_SITE = 'Acme running shoes are sold in forty countries.';
const OTHER_ORG = 'Acme running shoes won the Golden Sole award.';

const fact = async (key: string, website_id: string, text: string, confidence = 'high') => {
  const r = await call(s, 'POST', '/api/v1/knowledge-base/facts', { key, body: { website_id, text, confidence } });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return (r.body.fact?.id ?? r.body.fact_id) as string;
};
const review = async (key: string, id: string, decision: 'approve' | 'reject') => {
  const r = await call(s, 'POST', `/api/v1/knowledge-base/facts/${id}/review`, { key, body: { decision } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};
const deleteFacts = async (key: string, website_id: string, fact_ids: string[]) => {
  const r = await call(s, 'POST', '/api/v1/knowledge-base/facts/delete', { key, body: { website_id, fact_ids } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
};

async function recommendationsFor(key: string, website_id: string, request_id: string) {
  const r = await call(s, 'POST', '/api/v1/seo/recommendations', { key, body: { website_id, request_id, draft } });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const job = await until('the job ends', async () => {
    const p = await call(s, 'GET', `/api/v1/seo/recommendations/${r.body.job_id}`, { key, query: { website_id } });
    return p.status === 200 && (p.body.status === 'succeeded' || p.body.status === 'failed') ? SeoJobView.parse(p.body) : undefined;
  });
  expect(job.status).toBe('succeeded');
  return job;
}
const poll = async (key: string, website_id: string, jobId: string) =>
  SeoJobView.parse((await call(s, 'GET', `/api/v1/seo/recommendations/${jobId}`, { key, query: { website_id } })).body);

describe('SEO recommendations: approved facts the page lacks', () => {
  it('given approved, pending, rejected, archived, deleted and other websites’ facts and a draft that states one, then exactly the approved relevant facts it lacks are recommended, by confidence; a fact deleted afterwards disappears and its text was never copied into the log', async () => {
    const site = w.a.a1;
    await fact(w.a.key, site, STATED);
    const high = await fact(w.a.key, site, LACKING_HIGH, 'high');
    await fact(w.a.key, site, LACKING_MEDIUM, 'medium');
    await fact(w.a.key, site, UNRELATED);
    const pillar = randomUUID();
    const [, , rejected] = await researched(s, w.a.organization_id, site, pillar, [
      { text: PENDING },
      { text: PENDING_ORACLE, source_type: 'oracle' },
      { text: REJECTED },
    ]);
    await review(w.a.key, rejected, 'reject');
    const archived = await fact(w.a.key, site, ARCHIVED);
    const patched = await call(s, 'PATCH', `/api/v1/knowledge-base/facts/${archived}`, {
      key: w.a.key,
      body: { text: UNRELATED.replace('Oslo', 'Bergen') },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    await deleteFacts(w.a.key, site, [await fact(w.a.key, site, DELETED)]);
    await fact(w.a.key, w.a.a2, OTHER_SITE);
    await fact(w.b.key, w.b.b1, OTHER_ORG);
    await caughtUp(s, ['knowledge']);

    const job = await recommendationsFor(w.a.key, site, 'facts-1');
    const facts = job.recommendations.filter((r) => r.category === 'facts');
    expect(facts.map((r) => [r.excerpt, r.severity])).toEqual([
      [LACKING_HIGH, 'high'],
      [LACKING_MEDIUM, 'medium'],
    ]);
    for (const r of facts) {
      expect(r.title).toMatch(/^The page does not state an approved fact about /);
      expect(r.detail).toContain('approved fact of the knowledge base');
    }
    const all = JSON.stringify(job);
    for (const t of [STATED, UNRELATED, PENDING, PENDING_ORACLE, REJECTED, ARCHIVED, DELETED, OTHER_SITE, OTHER_ORG]) expect(all).not.toContain(t);
    // the other categories are still there
    expect(job.recommendations.some((r) => r.category === 'faq')).toBe(true);

    // the log holds the fact's id, not its text; deleting the fact takes the recommendation with it
    const produced = await s.rt.database.db('aivis_events').where('type', 'SeoRecommendationsProduced').whereRaw(`data->>'job_id' = ?`, [job.job_id]);
    expect(produced).toHaveLength(1);
    expect(JSON.stringify(produced[0].data)).not.toContain('return policy');
    await deleteFacts(w.a.key, site, [high]);
    await caughtUp(s, ['knowledge']);
    const after = await poll(w.a.key, site, job.job_id);
    expect(after.recommendations.filter((r) => r.category === 'facts').map((r) => r.excerpt)).toEqual([LACKING_MEDIUM]);
    expect(JSON.stringify(after)).not.toContain('return policy');
  });

  it("given the other website's approved fact the page lacks, then only that website's jobs name it", async () => {
    const job = await recommendationsFor(w.a.key, w.a.a2, 'facts-other-site');
    expect(job.recommendations.filter((r) => r.category === 'facts').map((r) => r.excerpt)).toEqual([OTHER_SITE]);
  });

  it('given an organization without the knowledge base and approved facts the page lacks, then the job succeeds with no fact recommendations', async () => {
    const org = await s.org('No knowledge base', { features: ['seo_recommendations'] });
    const site = await newSite(s, org.key, 'Acme');
    // the facts are there (written as before the feature was taken away): the feature alone keeps them out
    const h = await handle(
      { store: s.rt.store, organizationId: org.organization_id, websiteId: site, actor: SYSTEM_ACTOR },
      knowledgeStream(site),
      Knowledge,
      (st) => decideCreateFact(st, { fact_id: randomUUID(), website_id: site, text: LACKING_HIGH, confidence: 'high' }),
    );
    if (isDomainError(h)) throw new Error(h.message);
    await s.rt.waitForReadModels(h.position, ['knowledge']);
    expect(await s.rt.database.db('rm_kb_facts').where({ website_id: site, review_status: 'approved' })).toHaveLength(1);

    const job = await recommendationsFor(org.key, site, 'facts-off');
    expect(job.recommendations.filter((r) => r.category === 'facts')).toEqual([]);
    expect(job.recommendations.some((r) => r.category === 'faq')).toBe(true);
  });
});
