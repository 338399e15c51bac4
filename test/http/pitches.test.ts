import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS } from '../../src/domain/models';
import { enginesRefusing } from '../support/pitch-jobs';
import {
  BROKEN,
  FLAKY,
  PROSPECT,
  PROSPECT_DESCRIPTION,
  PROSPECT_NAME,
  type PitchSites,
  REFUSED,
  SLOW,
  startPitchSites,
  UNRESOLVED,
} from '../support/pitch-site';
import { call, startServer, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { inOneMinute, until } from '../support/until';

let s: TestServer;
let w: World;
let sites: PitchSites;
beforeAll(async () => {
  sites = await startPitchSites();
  s = await startServer({ PUBLIC_BASE_URL: 'https://app.aivis.test' }, { outbound: sites.outbound }, undefined, {
    engines: enginesRefusing(REFUSED),
  });
  w = await buildWorld(s);
});
afterAll(async () => {
  await s?.close();
  await sites?.close();
});

let keys = 0;
const newKey = () => `key-${++keys}-${Date.now()}`;
const create = (key: string | null, body: unknown, idempotencyKey: string | null = newKey()) =>
  call(s, 'POST', '/api/v1/pitches', { key, body, headers: idempotencyKey === null ? {} : { 'Idempotency-Key': idempotencyKey } });
const report = (key: string | null, id: string) => call(s, 'GET', `/api/v1/pitches/${id}`, { key });
/** every report of the server has ended: the log's head moves no more on its own */
const quiet = () =>
  until('every report to end', async () => (await s.rt.database.db('rm_pitches').where('status', 'processing').first('id')) === undefined);
const ended = (key: string, id: string) =>
  until(`pitch ${id} to end`, async () => {
    const r = await report(key, id);
    return r.body.pitch?.status !== 'processing' && r.body;
  });

/** A completed report's blocks: competitors, 20 discovery prompts, attributes, top sources, integer metrics over 80 answers. */
function expectEveryBlock(done: Awaited<ReturnType<typeof ended>>) {
  expect(done.competitors.length).toBeGreaterThanOrEqual(3);
  for (const c of done.competitors) {
    expect(c).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      url: expect.stringMatching(/^https:\/\//),
      mentions: expect.any(Number),
      sentiment: expect.any(Number),
    });
    expect(Number.isInteger(c.mentions) && Number.isInteger(c.sentiment)).toBe(true);
  }
  expect(done.competitors.some((c: { mentions: number }) => c.mentions > 0)).toBe(true);
  expect(done.prompts).toHaveLength(20);
  expect(new Set(done.prompts.map((p: { type: string }) => p.type))).toEqual(new Set(['discovery']));
  expect(done.metrics.total_responses).toBe(80);
  for (const v of Object.values(done.metrics)) expect(Number.isInteger(v)).toBe(true);
  expect(done.metrics.brand_mentions).toBeGreaterThan(0);
  expect(done.metrics.response_rate).toBe(Math.round((100 * done.metrics.brand_mentions) / 80));
  expect(done.metrics.sentiment_score).toBeGreaterThanOrEqual(-100);
  expect(done.metrics.sentiment_score).toBeLessThanOrEqual(100);
  expect(done.sources.length).toBeGreaterThan(0);
  expect(done.sources.length).toBeLessThanOrEqual(10);
  const counts = done.sources.map((x: { mentions: number }) => x.mentions);
  expect(counts).toEqual([...counts].sort((a, b) => b - a));
  expect(done.attributes.length).toBeGreaterThan(0);
  for (const a of done.attributes) {
    expect(['positive', 'negative']).toContain(a.attribute_type);
    expect(['target', 'competitor']).toContain(a.applies_to);
    expect(a.count).toBeGreaterThan(0);
  }
}

describe('creating a pitch report', () => {
  it('given a global key, when a report is asked for a URL, then 202 processing with an unguessable report_url, defaults United States and English', async () => {
    const r = await create(w.a.key, { website_url: `https://www.${PROSPECT}/pricing?utm_source=x` });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({
      pitch_id: expect.any(String),
      status: 'processing',
      report_url: expect.stringMatching(/^https:\/\/app\.aivis\.test\/r\/[A-Za-z0-9_-]{32}$/),
    });
    expect(r.body.report_url).not.toContain(r.body.pitch_id);
    const first = await report(w.a.key, r.body.pitch_id);
    expect(first.status).toBe(200);
    expect(first.body.pitch).toMatchObject({
      id: r.body.pitch_id,
      company_url: `https://${PROSPECT}`,
      country: 'United States',
      language: 'English',
      type: 'pitch_workspace',
    });
  });

  it('given the job ran, when the report is read, then every block is filled: competitors, 20 discovery prompts, attributes, top sources, integer metrics over 80 answers', async () => {
    const r = await create(w.a.key, { website_url: PROSPECT, country: 'Germany', language: 'German' });
    const done = await ended(w.a.key, r.body.pitch_id);
    expect(done.pitch).toMatchObject({
      status: 'completed',
      company_name: PROSPECT_NAME,
      company_description: PROSPECT_DESCRIPTION,
      country: 'Germany',
      language: 'German',
    });
    expect(done.pitch.research_note).toBeNull();
    expectEveryBlock(done);
  });

  it('given a URL, when the same site is asked twice, then the simulated research gives the same report (deterministic)', async () => {
    const one = await ended(w.a.key, (await create(w.a.key, { website_url: PROSPECT })).body.pitch_id);
    const two = await ended(w.a.key, (await create(w.a.key, { website_url: PROSPECT })).body.pitch_id);
    const strip = (r: typeof one) => ({
      metrics: r.metrics,
      sources: r.sources,
      names: r.competitors.map((c: { name: string }) => c.name),
      prompts: r.prompts.map((p: { prompt: string }) => p.prompt),
    });
    expect(strip(two)).toEqual(strip(one));
  });

  it('given a site that answers 503 once, when the report runs, then its page is read again and the report completes', async () => {
    const r = await create(w.a.key, { website_url: FLAKY });
    const done = await ended(w.a.key, r.body.pitch_id);
    expect(done.pitch).toMatchObject({ status: 'completed', company_name: 'flaky' });
    expect(sites.requests.filter((h) => h === FLAKY)).toHaveLength(2);
  });

  it('given a domain that does not resolve, when the report runs, then it completes from the bare domain with every block filled and a note that the website could not be read', async () => {
    const r = await create(w.a.key, { website_url: `https://${UNRESOLVED}/` });
    expect(r.status).toBe(202);
    const done = await ended(w.a.key, r.body.pitch_id);
    expect(done.pitch).toMatchObject({
      status: 'completed',
      company_name: 'Nowhere',
      company_description: '',
      research_note: 'The website could not be read: the domain does not resolve',
    });
    expectEveryBlock(done);
    expect(sites.requests).not.toContain(UNRESOLVED);
    // the noted report stays the organization's own
    expect(await report(w.b.key, r.body.pitch_id)).toMatchObject({ status: 404, body: { error: 'Pitch not found' } });
  });

  it('given a site that answers 500, when the report runs, then its page is read three times and the report completes from the bare domain, noted', async () => {
    const asked = sites.requests.filter((h) => h === BROKEN).length;
    const r = await create(w.a.key, { website_url: BROKEN });
    const done = await ended(w.a.key, r.body.pitch_id);
    expect(done.pitch).toMatchObject({
      status: 'completed',
      company_name: 'Broken',
      research_note: 'The website could not be read: it answered HTTP 500',
    });
    expect(sites.requests.filter((h) => h === BROKEN).length - asked).toBe(3);
    expectEveryBlock(done);
  });

  it('given an answer engine that refuses for good, when the report runs, then it fails and the allowance stays consumed', async () => {
    const org = await s.org('Failing', { pitch_allowance: 1 });
    const idempotencyKey = newKey();
    const r = { ...(await create(org.key, { website_url: REFUSED }, idempotencyKey)), idempotencyKey };
    expect(r.status).toBe(202);
    const done = await ended(org.key, r.body.pitch_id);
    expect(done.pitch.status).toBe('failed');
    await until('the reservation settled', async () => (await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used === 1);
    const again = await create(org.key, { website_url: PROSPECT });
    expect(again.status).toBe(403);
    expect(again.body).toEqual({ error: 'Pitch allowance exhausted' });
    // the spent allowance does not stand in the way of a retry of the report's own key: the same failed report answers
    const retried = await create(org.key, { website_url: REFUSED }, r.idempotencyKey);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ pitch_id: r.body.pitch_id, status: 'failed', report_url: r.body.report_url });
    expect((await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used).toBe(1);
    const feed = await until('the failure in the activity feed', async () => {
      const a = await call(s, 'GET', '/api/v1/activity', { key: org.key, query: { entity_type: 'pitch' } });
      return a.body.data?.length >= 2 && a.body.data;
    });
    expect(feed.map((e: { change_type: string; entity_ids: string[] }) => [e.change_type, e.entity_ids])).toEqual([
      ['failed', [r.body.pitch_id]],
      ['created', [r.body.pitch_id]],
    ]);
  });
});

describe('Idempotency-Key', () => {
  it('given a key, when the same normalized input is sent again, then the same report answers, 202 while processing and 200 after, charged once', async () => {
    const org = await s.org('Idem', { pitch_allowance: 5 });
    const key = newKey();
    const first = await create(org.key, { website_url: `https://${PROSPECT}` }, key);
    const again = await create(
      org.key,
      { website_url: `http://WWW.${PROSPECT.toUpperCase()}/about#x`, country: 'United States', language: 'English' },
      key,
    );
    expect([200, 202]).toContain(again.status);
    expect(again.body.pitch_id).toBe(first.body.pitch_id);
    expect(again.body.report_url).toBe(first.body.report_url);
    await ended(org.key, first.body.pitch_id);
    const after = await create(org.key, { website_url: PROSPECT }, key);
    expect(after.status).toBe(200);
    expect(after.body).toEqual({ pitch_id: first.body.pitch_id, status: 'completed', report_url: first.body.report_url });
    const usage = await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key });
    expect(usage.body.used).toBe(1);
    const list = await call(s, 'GET', '/api/v1/pitches', { key: org.key });
    expect(list.body.pitches.map((p: { id: string }) => p.id)).toEqual([first.body.pitch_id]);
  });

  it('given a key, when other input comes with it, then 409 and nothing is charged; a new key makes a new report', async () => {
    const org = await s.org('Idem other', { pitch_allowance: 5 });
    const key = newKey();
    const first = await create(org.key, { website_url: PROSPECT }, key);
    const other = await create(org.key, { website_url: PROSPECT, country: 'France' }, key);
    expect(other.status).toBe(409);
    expect(other.body).toEqual({ error: 'Idempotency key reused with a different request' });
    const otherSite = await create(org.key, { website_url: 'another.example' }, key);
    expect(otherSite.status).toBe(409);
    const fresh = await create(org.key, { website_url: PROSPECT }, newKey());
    expect(fresh.status).toBe(202);
    expect(fresh.body.pitch_id).not.toBe(first.body.pitch_id);
    await ended(org.key, first.body.pitch_id);
    await ended(org.key, fresh.body.pitch_id);
    expect((await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used).toBe(2);
  });

  it('given a failed report, when its key is retried, then the same failed report answers and nothing is charged again', async () => {
    const org = await s.org('Idem failed', { pitch_allowance: 5 });
    const key = newKey();
    const first = await create(org.key, { website_url: REFUSED }, key);
    await ended(org.key, first.body.pitch_id);
    const again = await create(org.key, { website_url: REFUSED }, key);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ pitch_id: first.body.pitch_id, status: 'failed', report_url: first.body.report_url });
    expect((await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used).toBe(1);
  });

  it('given two concurrent requests with one key, when both run, then both answer the one report and one pitch is charged', async () => {
    const org = await s.org('Idem race', { pitch_allowance: 5 });
    for (let round = 0; round < 3; round++) {
      const key = newKey();
      const [x, y] = await Promise.all([create(org.key, { website_url: PROSPECT }, key), create(org.key, { website_url: PROSPECT }, key)]);
      // each answers the one report as it stood when read: 202 while processing, 200 once ended (the simulated
      // engine can end it before the second answer is read, under load)
      for (const r of [x, y]) expect(r.status, JSON.stringify(r.body)).toBe(r.body.status === 'processing' ? 202 : 200);
      expect({ ...y.body, status: undefined }).toEqual({ ...x.body, status: undefined });
      await ended(org.key, x.body.pitch_id);
    }
    expect((await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used).toBe(3);
    expect((await call(s, 'GET', '/api/v1/pitches', { key: org.key })).body.pitches).toHaveLength(3);
  });

  it('given two concurrent requests with one key and different input, then one report and one 409', async () => {
    const org = await s.org('Idem race other', { pitch_allowance: 5 });
    const key = newKey();
    const [x, y] = await Promise.all([
      create(org.key, { website_url: PROSPECT }, key),
      create(org.key, { website_url: PROSPECT, language: 'French' }, key),
    ]);
    const won = x.status === 409 ? y : x;
    expect((won === x ? y : x).status).toBe(409);
    expect(won.status, JSON.stringify(won.body)).toBe(won.body.status === 'processing' ? 202 : 200);
    await ended(org.key, won.body.pitch_id);
    expect((await call(s, 'GET', '/api/v1/pitches/usage', { key: org.key })).body.used).toBe(1);
  });

  it('given no Idempotency-Key, then 400 naming it and nothing written', async () => {
    await quiet();
    const head = await s.head();
    const r = await create(w.a.key, { website_url: PROSPECT }, null);
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('Idempotency-Key');
    expect(await s.head()).toBe(head);
  });
});

describe('who may create and read reports', () => {
  it('given a scoped key, when it creates, reads, lists or asks the usage, then 403 Forbidden: global API key required', async () => {
    const r = await create(w.a.key, { website_url: PROSPECT });
    for (const res of [
      await create(w.a.scoped, { website_url: PROSPECT }),
      await report(w.a.scoped, r.body.pitch_id),
      await call(s, 'GET', '/api/v1/pitches', { key: w.a.scoped }),
      await call(s, 'GET', '/api/v1/pitches/usage', { key: w.a.scoped }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'Forbidden: global API key required' });
    }
  });

  it('given no key or a revoked one, then 401 Unauthorized', async () => {
    const r = await create(w.a.key, { website_url: PROSPECT });
    for (const key of [null, w.a.revoked]) {
      expect((await create(key, { website_url: PROSPECT })).status).toBe(401);
      expect((await call(s, 'GET', '/api/v1/pitches', { key })).body).toEqual({ error: 'Unauthorized' });
      expect(await report(key, r.body.pitch_id)).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
      expect(await call(s, 'GET', '/api/v1/pitches/usage', { key })).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    }
  });

  it('given another organization, when it reads the report, then 404 Pitch not found; a malformed id 400 Invalid pitch ID format', async () => {
    const r = await create(w.a.key, { website_url: PROSPECT });
    expect(await report(w.b.key, r.body.pitch_id)).toMatchObject({ status: 404, body: { error: 'Pitch not found' } });
    expect(await report(w.a.key, '8b0a7a52-0d7e-4ac0-8a8c-5b2a4c0f7e11')).toMatchObject({ status: 404, body: { error: 'Pitch not found' } });
    expect(await report(w.a.key, 'not-a-uuid')).toMatchObject({ status: 400, body: { error: 'Invalid pitch ID format' } });
    expect((await call(s, 'GET', '/api/v1/pitches', { key: w.b.key })).body.pitches.map((p: { id: string }) => p.id)).not.toContain(r.body.pitch_id);
  });

  it('given the feature off or the allowance spent, then 403 with the contract messages and nothing written', async () => {
    const off = await s.org('No pitch', { features: ['shopping'] });
    const none = await s.org('No allowance', { pitch_allowance: 0 });
    await quiet();
    const head = await s.head();
    expect(await create(off.key, { website_url: PROSPECT })).toMatchObject({
      status: 403,
      body: { error: 'Pitch reports are not enabled for this organization' },
    });
    expect(await create(none.key, { website_url: PROSPECT })).toMatchObject({ status: 403, body: { error: 'Pitch allowance exhausted' } });
    expect(await s.head()).toBe(head);
  });

  it('given bad input, then 400 naming the field', async () => {
    for (const [body, field] of [
      [{}, 'website_url'],
      [{ website_url: 'not a url at all' }, 'website_url'],
      [{ website_url: 42 }, 'website_url'],
      [{ website_url: 'http://127.0.0.1:8080/' }, 'website_url'],
      [{ website_url: 'localhost' }, 'website_url'],
      [{ website_url: 'https://[::1]/' }, 'website_url'],
      [{ website_url: PROSPECT, country: '' }, 'country'],
      [{ website_url: PROSPECT, language: 'x'.repeat(101) }, 'language'],
      [{ website_url: PROSPECT, extra: 1 }, 'extra'],
    ] as const) {
      const r = await create(w.a.key, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toContain(field);
    }
  });
});

describe('limits', () => {
  it('given 3 reports processing, when a 4th is asked, then 429 Too many pitch reports in progress with Retry-After; once one ends, another is admitted', async () => {
    const org = await s.org('Busy', { pitch_allowance: 20 });
    const slow = [];
    for (let i = 0; i < 3; i++) {
      const r = await create(org.key, { website_url: SLOW });
      expect(r.status).toBe(202);
      slow.push(r.body.pitch_id);
    }
    const fourth = await create(org.key, { website_url: PROSPECT });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toEqual({ error: 'Too many pitch reports in progress: at most 3 at once' });
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0);
    // another organization is not held back
    expect((await create(w.b.key, { website_url: PROSPECT })).status).toBe(202);
    sites.release();
    for (const id of slow) expect((await ended(org.key, id)).pitch.status).toBe('completed');
    expect((await create(org.key, { website_url: PROSPECT })).status).toBe(202);
  });

  it('given 10 requests in a minute, when an 11th comes, then 429 Too many pitch report requests with Retry-After', async () => {
    const attempt = async () => {
      const org = await s.org('Chatty', { pitch_allowance: 20 });
      const key = newKey();
      for (let i = 0; i < 10; i++) expect((await create(org.key, { website_url: PROSPECT }, key)).status).not.toBe(429);
      const r = await create(org.key, { website_url: PROSPECT }, key);
      expect(r.status).toBe(429);
      expect(r.body).toEqual({ error: 'Too many pitch report requests: at most 10 per minute' });
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    };
    await inOneMinute(attempt);
  });
});

describe('side effects', () => {
  it('given a report created, then no email is requested and the activity feed shows it', async () => {
    const org = await s.org('Quiet');
    const r = await create(org.key, { website_url: PROSPECT });
    await ended(org.key, r.body.pitch_id);
    const emails = await s.rt.database.db('rm_emails').count<{ n: string }[]>('* as n');
    expect(Number(emails[0].n)).toBe(0);
    const feed = await until('the activity feed', async () => {
      const a = await call(s, 'GET', '/api/v1/activity', { key: org.key, query: { entity_type: 'pitch' } });
      return a.body.data?.length >= 2 && a.body.data;
    });
    expect(feed.map((e: { change_type: string }) => e.change_type).sort()).toEqual(['completed', 'created']);
    expect(MODELS.length).toBe(11);
  });
});
