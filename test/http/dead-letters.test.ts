import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSite, type Site } from '../support/answers';
import { answerFromYearZero, testMetadata } from '../support/events';
import { call, startServer, type TestServer } from '../support/server';

let s: TestServer;
let a: { key: string; organization_id: string };
let b: { key: string; organization_id: string };
let siteA: Site;
let siteB: Site;
let poisonId: string;

const imp = (key: string, site: Site, text: string, run_at = '2026-03-01T10:00:00Z') =>
  call(s, 'POST', '/api/v1/responses/import', {
    key,
    body: { website_id: site.id, responses: [{ prompt_id: site.prompts[0].id, model: 'chatgpt', run_at, text }] },
  });
const listed = async (key: string, site: Site) =>
  (
    (await call(s, 'GET', '/api/v1/responses', { key, query: { website_id: site.id, start_date: '2020-01-01', page_size: 100 } })).body.responses as {
      response: string;
    }[]
  )
    .map((r) => r.response)
    .sort();
const mentionRate = (key: string, site: Site) => call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', { key, body: { website_id: site.id } });

/**
 * An answer the import command accepted before it checked answer times (run_at '0001-01-01T00:00:00+01:00', year 0 in
 * UTC): the answers read model cannot hold it. Appended to the store directly, around the command's check.
 */
async function appendPoison(site: Site, organizationId: string): Promise<string> {
  const response_id = randomUUID();
  const data = answerFromYearZero({ response_id, website_id: site.id, prompt_id: site.prompts[0].id }, 'From before the calendar.');
  const id = randomUUID();
  await s.rt.store.append(
    `import-${randomUUID()}`,
    [{ id, type: 'ResponseRecorded', data, metadata: testMetadata({ organization_id: organizationId, website_id: site.id }) }],
    'no_stream',
  );
  return id;
}

describe('a poison event in the answers read model', () => {
  beforeAll(async () => {
    s = await startServer();
    a = await s.org('Poisoned');
    b = await s.org('Bystander');
    siteA = await buildSite(s, a.key, { name: 'Acme', url: 'https://acme-poison.example.com' });
    siteB = await buildSite(s, b.key, { name: 'Zentro', url: 'https://zentro-poison.example.com' });
    expect((await imp(a.key, siteA, 'Acme before.')).status).toBe(201);
    expect((await imp(b.key, siteB, 'Zentro before.')).status).toBe(201);
    poisonId = await appendPoison(siteA, a.organization_id);
  });
  afterAll(async () => s?.close());

  it("given the poison event, then another organization's imports keep appearing at once, and its reads are not stale", async () => {
    for (let i = 0; i < 3; i++) {
      const r = await imp(b.key, siteB, `Zentro after ${i}.`);
      expect(r.status).toBe(201);
      expect(await listed(b.key, siteB)).toContain(`Zentro after ${i}.`);
    }
    const m = await mentionRate(b.key, siteB);
    expect(m.body).toMatchObject({ responses: 4, data: { Zentro: { mention_rate: 100 } } });
    expect(m.body.stale).toBeUndefined();
    expect(m.headers.get('x-aivis-stale')).toBeNull();
  });

  it('given the poison event, then writes to the poisoned website do not wait out the read-your-writes bound', async () => {
    const t0 = Date.now();
    const r = await imp(a.key, siteA, 'Acme after.');
    // the bound is 5 s: answering well under it says the answers read model went past the write
    expect(Date.now() - t0).toBeLessThan(2500);
    expect(r.status).toBe(201);
    // set aside behind the poison, not applied
    expect(await listed(a.key, siteA)).toEqual(['Acme before.']);
  });

  it('given the poison event, then /readyz says degraded (200), naming the projection, the website and the error', async () => {
    const r = await call(s, 'GET', '/readyz');
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('degraded');
    // the read model that applies answers sets it aside (the content hub's answer and citation rows are written by it)
    const entry = (projection: string) => ({
      projection,
      website_id: siteA.id,
      event_id: poisonId,
      type: 'ResponseRecorded',
      error: expect.stringContaining('date/time field value out of range'),
      since: expect.any(String),
      held: expect.any(Number),
    });
    expect(r.body.set_aside).toEqual([entry('answers')]);
    expect(r.body.projections.find((p: { name: string }) => p.name === 'answers').status).toBe('running');
  });

  it("given the poison event, then the poisoned website's metrics say they are stale, in the body and a header", async () => {
    const m = await mentionRate(a.key, siteA);
    expect(m.status).toBe(200);
    expect(m.body).toMatchObject({ stale: true, responses: 1 });
    expect(m.headers.get('x-aivis-stale')).toBe('1');
    const series = await call(s, 'POST', '/api/v1/metrics/share-of-voice/time-series', { key: a.key, body: { website_id: siteA.id } });
    expect(series.body.stale).toBe(true);
  });

  it('given the poison event, when the answers read model is rebuilt while the server serves, then it swaps in whole but for the poisoned website, which stays set aside', async () => {
    const answers = s.rt.runners.get('answers')!;
    const rebuilt = answers.rebuild();
    // the live read model serves during the rebuild
    expect(await listed(b.key, siteB)).toHaveLength(4);
    await rebuilt;
    expect(await listed(b.key, siteB)).toEqual(['Zentro after 0.', 'Zentro after 1.', 'Zentro after 2.', 'Zentro before.']);
    expect(await listed(a.key, siteA)).toEqual(['Acme before.']);
    // and the server's live runner goes on from the swap: a new answer of the bystander appears at once
    expect((await imp(b.key, siteB, 'Zentro later.')).status).toBe(201);
    expect(await listed(b.key, siteB)).toContain('Zentro later.');
    const setAside = (await call(s, 'GET', '/readyz')).body.set_aside as { projection: string }[];
    expect(setAside.find((x) => x.projection === 'answers')).toMatchObject({ website_id: siteA.id, event_id: poisonId });
  });
});
