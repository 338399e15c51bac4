import { afterAll, describe, expect, it } from 'vitest';
import { PipelineAnswers } from '../../queries/content/versions';
import { GROUNDING_INSTRUCTION } from '../../src/engines/grounding';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { type NatsServerProcess, startNatsServer } from '../bus/nats-server';
import { onRealPostgres } from '../support/db';
import { simulatedEnginesWith } from '../support/engines';
import { researched } from '../support/knowledge';
import { fakeResolver } from '../support/net';
import { call, startServer, type TestServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';
import { until } from '../support/until';

/** Every prompt the writer was given, by the title it was asked to write (its `Title:` line). */
const prompts = new Map<string, string[]>();
const recording = simulatedEnginesWith(async (_model, req, simulated) => {
  const title = /^Title: (.*)$/m.exec(req.prompt)?.[1];
  if (req.prompt.startsWith('aivis writer:') && title) prompts.set(title, [...(prompts.get(title) ?? []), req.prompt]);
  return simulated();
});

let nats: NatsServerProcess | null = null;
afterAll(async () => {
  await nats?.dispose();
});

/** The server over real Postgres and NATS JetStream; outbound fetches (pillar research of the sites) reach nothing. */
async function start(): Promise<TestServer> {
  if (onRealPostgres) nats = await startNatsServer();
  return startServer({}, {}, undefined, {
    natsUrl: nats?.url,
    engines: recording,
    fetch: createSafeFetcher({ resolver: fakeResolver({}) }),
  });
}

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), start);

const generate = (key: string, body: Record<string, unknown>) => call(s, 'POST', '/api/v1/content/generate', { key, body });
const stage = (key: string, id: string, want: string) =>
  until(`content ${id} at ${want}`, async () => {
    const r = await call(s, 'GET', `/api/v1/content/${id}/status`, { key });
    return r.status === 200 && r.body.stage === want ? r.body : undefined;
  });
async function fact(key: string, website: string, text: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await call(s, 'POST', '/api/v1/knowledge-base/facts', { key, body: { website_id: website, text, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.fact.id;
}
async function pillar(key: string, website: string, name: string): Promise<string> {
  const r = await call(s, 'POST', '/api/v1/knowledge-base/pillars', { key, body: { website_id: website, name } });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body.pillar.id;
}
/** The versions of an item, oldest first, each with its fact ids. */
async function versions(key: string, id: string) {
  const list = await call(s, 'GET', `/api/v1/content/${id}/versions`, { key });
  const out = [];
  for (const v of [...list.body.versions].reverse()) {
    const r = await call(s, 'GET', `/api/v1/content/${id}/versions/${v.version_id}`, { key });
    out.push(PipelineAnswers.version.parse(r.body));
  }
  return out;
}
const uuid = () => crypto.randomUUID();

describe('grounded generation: the gate', () => {
  it('given an organization without the knowledge base, then fact_review answers 403 and nothing is written; without it the generation runs', async () => {
    const off = await s.org('No KB', { features: ['pitch'] });
    const site = await call(s, 'POST', '/api/v1/websites', { key: off.key, body: { name: 'Off', url: 'https://off.example.com' } });
    const websiteId = site.body.website.id;
    const before = await s.head();
    const r = await generate(off.key, { website_id: websiteId, title: 'No KB', fact_review: { kept_claim_ids: [uuid()] } });
    expect(r).toMatchObject({ status: 403, body: { error: 'Knowledge base is not enabled for this organization' } });
    const empty = await generate(off.key, { website_id: websiteId, title: 'No KB either', fact_review: {} });
    expect(empty).toMatchObject({ status: 403, body: { error: 'Knowledge base is not enabled for this organization' } });
    expect(await s.head()).toBe(before);
    const plain = await generate(off.key, { website_id: websiteId, title: 'Plain draft' });
    expect(plain.status).toBe(202);
  });
});

describe('grounded generation: ids that are not approved facts of the website', () => {
  it('given unknown, pending, rejected, other-website and other-organization ids, then 400 naming the field and the ids, nothing written', async () => {
    const p = await pillar(w.a.key, w.a.a1, 'Pricing');
    const [pending] = await researched(s, w.a.organization_id, w.a.a1, p, [{ text: 'Plans start at nine dollars a month.' }]);
    const rejected = await fact(w.a.key, w.a.a1, 'Acme was founded in 1990.');
    expect((await call(s, 'POST', `/api/v1/knowledge-base/facts/${rejected}/review`, { key: w.a.key, body: { decision: 'reject' } })).status).toBe(
      200,
    );
    const otherSite = await fact(w.a.key, w.a.a2, 'Acme Two ships worldwide.');
    const otherOrg = await fact(w.b.key, w.b.b1, 'Bravo has 40 employees.');
    const good = await fact(w.a.key, w.a.a1, 'Acme supports SSO on every plan.');
    const unknown = uuid();
    const before = await s.head();
    for (const [field, bad] of [
      ['kept_claim_ids', unknown],
      ['kept_claim_ids', pending],
      ['kept_claim_ids', rejected],
      ['kept_claim_ids', otherSite],
      ['kept_claim_ids', otherOrg],
      ['excluded_claim_ids', unknown],
      ['excluded_claim_ids', otherOrg],
      ['excluded_claim_ids', pending],
      ['topic_ids', unknown],
    ] as const) {
      const body = { kept_claim_ids: [good], [field]: field === 'kept_claim_ids' ? [good, bad] : [bad] };
      const r = await generate(w.a.key, { website_id: w.a.a1, title: 'Refused', fact_review: body });
      expect(r.status, `${field} ${JSON.stringify(r.body)}`).toBe(400);
      expect(r.body.error).toContain(`fact_review.${field}`);
      expect(r.body.error).toContain(bad);
      expect(r.body.error).not.toContain(good);
    }
    const both = await generate(w.a.key, {
      website_id: w.a.a1,
      title: 'Refused',
      fact_review: { kept_claim_ids: [good], excluded_claim_ids: [good] },
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toContain('fact_review.excluded_claim_ids');
    const notUuid = await generate(w.a.key, { website_id: w.a.a1, title: 'Refused', fact_review: { kept_claim_ids: ['nope'] } });
    expect(notUuid.status).toBe(400);
    expect(notUuid.body.error).toContain('kept_claim_ids');
    const tooMany = await generate(w.a.key, {
      website_id: w.a.a1,
      title: 'Refused',
      fact_review: { kept_claim_ids: Array.from({ length: 101 }, uuid) },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toContain('kept_claim_ids');
    expect(await s.head()).toBe(before);
    expect(prompts.has('Refused')).toBe(false);
  });
});

describe('grounded generation: what the writer is given', () => {
  it('given kept facts, topics and an excluded fact, then the writer gets the kept and topic facts, never the excluded one, and each version records the ids', async () => {
    const p = await pillar(w.a.key, w.a.a1, 'Security');
    const q = await pillar(w.a.key, w.a.a1, 'Company');
    const kept = await fact(w.a.key, w.a.a1, 'Acme offers a 30 day free trial.');
    const high = await fact(w.a.key, w.a.a1, 'Acme encrypts data at rest with AES-256.', { pillar_id: p, confidence: 'high' });
    const low = await fact(w.a.key, w.a.a1, 'Acme passed a SOC 2 Type II audit.', { pillar_id: p, confidence: 'low' });
    const excluded = await fact(w.a.key, w.a.a1, 'Acme stores backups in Frankfurt only.', { pillar_id: p, confidence: 'high' });
    const [pendingInTopic] = await researched(s, w.a.organization_id, w.a.a1, p, [{ text: 'Acme may offer on-premise hosting.' }]);
    const otherTopic = await fact(w.a.key, w.a.a1, 'Acme has offices in Lisbon.', { pillar_id: q });

    const r = await generate(w.a.key, {
      website_id: w.a.a1,
      title: 'Grounded security guide',
      auto_approve_brief: true,
      fact_review: { topic_ids: [p], kept_claim_ids: [kept], excluded_claim_ids: [excluded] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const id = r.body.content_id;
    await stage(w.a.key, id, 'generated');

    const asked = prompts.get('Grounded security guide') ?? [];
    expect(asked.map((x) => x.split('\n', 1)[0])).toEqual(['aivis writer: brief', 'aivis writer: article']);
    for (const prompt of asked) {
      expect(prompt).toContain(GROUNDING_INSTRUCTION);
      for (const text of ['Acme offers a 30 day free trial.', 'Acme encrypts data at rest with AES-256.', 'Acme passed a SOC 2 Type II audit.'])
        expect(prompt).toContain(text);
      expect(prompt).not.toContain('Frankfurt');
      expect(prompt).not.toContain('on-premise');
      expect(prompt).not.toContain('Lisbon');
    }
    const body = (await call(s, 'GET', `/api/v1/content/${id}`, { key: w.a.key })).body.body as string;
    expect(body).toContain('## Key facts');
    expect(body).toContain('- Acme encrypts data at rest with AES-256.');
    expect(body).not.toContain('Frankfurt');
    const vs = await versions(w.a.key, id);
    expect(vs.map((v) => [v.change_type, v.fact_ids])).toEqual([
      ['brief', [kept, high, low]],
      ['generated', [kept, high, low]],
    ]);
    for (const v of vs) expect(v.fact_ids).not.toContain(excluded);
    expect([pendingInTopic, otherTopic].some((x) => vs[0].fact_ids.includes(x))).toBe(false);
  });

  it('given no fact_review, then the writer gets no facts and the versions record none', async () => {
    await fact(w.a.key, w.a.a1, 'Acme answers support tickets within an hour.');
    const r = await generate(w.a.key, { website_id: w.a.a1, title: 'Ungrounded draft', auto_approve_brief: true });
    expect(r.status).toBe(202);
    await stage(w.a.key, r.body.content_id, 'generated');
    const asked = prompts.get('Ungrounded draft') ?? [];
    expect(asked).toHaveLength(2);
    for (const prompt of asked) {
      expect(prompt).not.toContain('<<<FACTS');
      expect(prompt).not.toContain('within an hour');
    }
    expect((await versions(w.a.key, r.body.content_id)).map((v) => v.fact_ids)).toEqual([[], []]);
  });

  it('given a kept fact deleted while the brief waits for approval, then the article is written without it and its version does not record it', async () => {
    const stays = await fact(w.a.key, w.a.a1, 'Acme integrates with Slack and Teams.');
    const goes = await fact(w.a.key, w.a.a1, 'Acme guarantees 99.99 percent uptime.');
    const r = await generate(w.a.key, { website_id: w.a.a1, title: 'Deleted fact draft', fact_review: { kept_claim_ids: [stays, goes] } });
    expect(r.status).toBe(202);
    const id = r.body.content_id;
    await stage(w.a.key, id, 'generated_brief');
    const del = await call(s, 'POST', '/api/v1/knowledge-base/facts/delete', { key: w.a.key, body: { website_id: w.a.a1, fact_ids: [goes] } });
    expect(del.body.deleted_ids).toEqual([goes]);
    expect((await call(s, 'POST', `/api/v1/content/${id}/brief/approve`, { key: w.a.key })).status).toBe(200);
    await stage(w.a.key, id, 'generated');
    const [brief, article] = prompts.get('Deleted fact draft') ?? [];
    expect(brief).toContain('99.99 percent uptime');
    expect(article).toContain('Slack and Teams');
    expect(article).not.toContain('99.99 percent uptime');
    expect((await versions(w.a.key, id)).map((v) => v.fact_ids)).toEqual([[stays, goes], [stays]]);
  });
});

describe('grounded generation: tenancy', () => {
  it("given another organization's key or a key scoped to another website, then it cannot ground on the website's facts", async () => {
    const a1Fact = await fact(w.a.key, w.a.a1, 'Acme is certified ISO 27001.');
    const a2Fact = await fact(w.a.key, w.a.a2, 'Acme Two runs in three regions.');
    const before = await s.head();
    // org B on its own website, naming org A's fact: not an approved fact of its website
    const b = await generate(w.b.key, { website_id: w.b.b1, title: 'Tenancy B', fact_review: { kept_claim_ids: [a1Fact] } });
    expect(b.status).toBe(400);
    expect(b.body.error).toContain(a1Fact);
    // org B on org A's website
    const bOnA = await generate(w.b.key, { website_id: w.a.a1, title: 'Tenancy B', fact_review: { kept_claim_ids: [a1Fact] } });
    expect(bOnA).toMatchObject({ status: 403, body: { error: 'Unauthorized access to this website' } });
    // a key scoped to a2: not a1, and a1's facts are not a2's
    const scopedOnA1 = await generate(w.a.scoped, { website_id: w.a.a1, title: 'Tenancy scoped', fact_review: { kept_claim_ids: [a1Fact] } });
    expect(scopedOnA1.status).toBe(403);
    const scopedA1Fact = await generate(w.a.scoped, { website_id: w.a.a2, title: 'Tenancy scoped', fact_review: { kept_claim_ids: [a1Fact] } });
    expect(scopedA1Fact.status).toBe(400);
    expect(scopedA1Fact.body.error).toContain(a1Fact);
    expect(await s.head()).toBe(before);
    expect(prompts.has('Tenancy B') || prompts.has('Tenancy scoped')).toBe(false);
    const ok = await generate(w.a.scoped, {
      website_id: w.a.a2,
      title: 'Tenancy scoped ok',
      auto_approve_brief: true,
      fact_review: { kept_claim_ids: [a2Fact] },
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(202);
    await stage(w.a.scoped, ok.body.content_id, 'generated');
    expect((prompts.get('Tenancy scoped ok') ?? []).every((x) => x.includes('three regions') && !x.includes('ISO 27001'))).toBe(true);
  });
});
