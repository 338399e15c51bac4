import { describe, expect, it } from 'vitest';
import { onRealPostgres } from '../support/db';
import { sharedFirst, useRaceSetup } from '../support/races';
import { type Answer, type Call, call } from '../support/server';

// Every rule two requests can race for, raced: N requests at once, spread over two instances on one database (each
// instance serialises its own writes to a stream, so only the expected version can settle writes of two instances).
if (!onRealPostgres)
  console.log('races: one instance on PGlite (a second instance needs a shared Postgres server); each rule is still decided on its stream');

const N = 8;

describe('check-then-act rules under concurrent requests', () => {
  const setup = useRaceSetup('Races', { name: 'Racer', url: 'https://racer.example.com' }, sharedFirst);

  /** N requests at once, alternating between the instances. */
  const race = (method: string, path: string, req: (i: number) => Call) =>
    Promise.all(Array.from({ length: N }, (_, i) => call(setup.on(i), method, path, { key: setup.key, ...req(i) })));
  const statuses = (rs: Answer[]) => rs.map((r) => r.status).sort();
  const winner = (rs: Answer[], status: number) => {
    const won = rs.filter((r) => r.status === status);
    expect(won, JSON.stringify(rs.map((r) => [r.status, r.body]))).toHaveLength(1);
    return won[0].body;
  };
  const losers = (rs: Answer[], status: number) => rs.filter((r) => r.status !== status);
  const eventsOf = async (type: string, where: (d: Record<string, unknown>) => boolean) =>
    // this organization's only: other files' organizations on the shared server write the same names
    (
      await setup.a.rt.database
        .db('aivis_events')
        .where('type', type)
        .whereRaw("metadata->>'organization_id' = ?", [setup.organization_id])
        .select('data')
    )
      .map((r: { data: Record<string, unknown> }) => r.data)
      .filter(where);

  it('given one topic name sent N times at once in different cases, then one 201 and N-1 409 naming the winner', async () => {
    const { site } = setup;
    const rs = await race('POST', '/api/v1/topics', (i) => ({
      body: { website_id: site, name: ['Pricing', 'pricing', ' PRICING', 'PriCing '][i % 4] },
    }));
    expect(statuses(rs)).toEqual([201, ...Array(N - 1).fill(409)]);
    const won = winner(rs, 201);
    for (const r of losers(rs, 201)) expect(r.body).toEqual({ error: 'Topic already exists', existing: won.topic });
    expect(await eventsOf('TopicCreated', (d) => String(d.name).trim().toLowerCase() === 'pricing')).toHaveLength(1);
  });

  it('given 60 topics of different names created at once over both instances, then every one is created (a conflict is retried, never a 500)', async () => {
    const { site } = setup;
    const rs = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        call(setup.on(i), 'POST', '/api/v1/topics', { key: setup.key, body: { website_id: site, name: `Crowd ${i}` } }),
      ),
    );
    expect(rs.filter((r) => r.status !== 201).map((r) => [r.status, r.body])).toEqual([]);
    expect(await eventsOf('TopicCreated', (d) => String(d.name).startsWith('Crowd '))).toHaveLength(60);
  });

  it('given a soft-deleted topic, when its name is sent N times at once, then it comes back once and the others are 409', async () => {
    const { a, key, site } = setup;
    const t = (await call(a, 'POST', '/api/v1/topics', { key, body: { website_id: site, name: 'Support' } })).body.topic;
    expect((await call(a, 'DELETE', `/api/v1/topics/${t.id}`, { key, query: { website_id: site } })).status).toBe(200);
    const rs = await race('POST', '/api/v1/topics', () => ({ body: { website_id: site, name: 'support' } }));
    expect(statuses(rs)).toEqual([201, ...Array(N - 1).fill(409)]);
    expect(winner(rs, 201)).toEqual({ topic: { id: t.id, name: 'Support' }, restored: true });
    for (const r of losers(rs, 201)) expect(r.body).toEqual({ error: 'Topic already exists', existing: { id: t.id, name: 'Support' } });
    expect(await eventsOf('TopicRestored', (d) => d.topic_id === t.id)).toHaveLength(1);
  });

  it('given one topic deleted N times at once, then one 200 and N-1 404', async () => {
    const { a, key, site } = setup;
    const t = (await call(a, 'POST', '/api/v1/topics', { key, body: { website_id: site, name: 'Gone' } })).body.topic;
    const rs = await race('DELETE', `/api/v1/topics/${t.id}`, () => ({ query: { website_id: site } }));
    expect(statuses(rs)).toEqual([200, ...Array(N - 1).fill(404)]);
    for (const r of losers(rs, 200)) expect(r.body).toEqual({ error: 'Topic not found' });
    expect(await eventsOf('TopicDeleted', (d) => d.topic_id === t.id)).toHaveLength(1);
  });

  it('given one attribute name sent N times at once, then one 201 and N-1 409', async () => {
    const { site } = setup;
    const rs = await race('POST', '/api/v1/attributes', (i) => ({ body: { website_id: site, name: i % 2 ? 'Price' : 'PRICE' } }));
    expect(statuses(rs)).toEqual([201, ...Array(N - 1).fill(409)]);
    const won = winner(rs, 201);
    for (const r of losers(rs, 201)) expect(r.body).toEqual({ error: 'Attribute already exists', existing: won.attribute });
    expect(await eventsOf('AttributeCreated', (d) => String(d.name).toLowerCase() === 'price')).toHaveLength(1);
  });

  it('given one competitor URL sent N times at once (spelled differently), then one 201 and N-1 409', async () => {
    const { site } = setup;
    const urls = ['https://globex.example.net', 'http://www.globex.example.net/', 'globex.example.net', 'https://GLOBEX.example.net/?utm_source=x'];
    const rs = await race('POST', '/api/v1/competitors', (i) => ({ body: { website_id: site, name: `Globex ${i}`, url: urls[i % 4] } }));
    expect(statuses(rs)).toEqual([201, ...Array(N - 1).fill(409)]);
    const won = winner(rs, 201);
    for (const r of losers(rs, 201)) expect(r.body).toEqual({ error: 'Competitor already exists', existing: won.competitor });
    expect(await eventsOf('CompetitorAdded', (d) => d.normalized_url === won.competitor.normalized_url)).toHaveLength(1);
  });

  it('given one external_id sent N times at once on new websites, then one 201 and N-1 409 naming the website that has it', async () => {
    const { a, key } = setup;
    const rs = await race('POST', '/api/v1/websites', (i) => ({
      body: { name: `Partner site ${i}`, url: `https://p${i}.example.com`, external_id: 'crm-42' },
    }));
    expect(statuses(rs)).toEqual([201, ...Array(N - 1).fill(409)]);
    const won = winner(rs, 201).website;
    for (const r of losers(rs, 201)) {
      expect(r.body).toEqual({
        error: 'external_id is already mapped to another website',
        existing: { website_id: won.id, name: won.name, url: won.url, status: 'active', external_id: 'crm-42' },
      });
    }
    expect((await call(a, 'GET', '/api/v1/websites/by-external-id/crm-42', { key })).body.website.id).toBe(won.id);
  });

  it('given N websites given one external_id at once (PATCH), then one 200 and N-1 409', async () => {
    const { a, key, on } = setup;
    const sites = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        call(a, 'POST', '/api/v1/websites', { key, body: { name: `Mapped ${i}`, url: `https://m${i}.example.com` } }),
      ),
    );
    const rs = await Promise.all(
      sites.map((s, i) => call(on(i), 'PATCH', `/api/v1/websites/${s.body.website.id}`, { key, body: { external_id: 'crm-7' } })),
    );
    expect(statuses(rs)).toEqual([200, ...Array(N - 1).fill(409)]);
    const won = winner(rs, 200).website;
    for (const r of losers(rs, 200))
      expect(r.body).toMatchObject({
        error: 'external_id is already mapped to another website',
        existing: { website_id: won.id, external_id: 'crm-7' },
      });
    expect(await eventsOf('WebsiteExternalIdSet', (d) => d.external_id === 'crm-7')).toHaveLength(1);
  });

  it('given one key revoked N times at once, then one 200 and N-1 404, and the key is refused everywhere', async () => {
    const { a, b, key } = setup;
    const k = (await call(a, 'POST', '/api/v1/api-keys', { key, body: { name: 'short-lived' } })).body;
    const rs = await race('DELETE', `/api/v1/api-keys/${k.id}`, () => ({}));
    expect(statuses(rs)).toEqual([200, ...Array(N - 1).fill(404)]);
    for (const r of losers(rs, 200)) expect(r.body).toEqual({ error: 'API key not found' });
    expect(await eventsOf('ApiKeyRevoked', (d) => d.api_key_id === k.id)).toHaveLength(1);
    for (const s of b ? [a, b] : [a]) expect((await call(s, 'GET', '/api/v1/websites', { key: k.key })).status).toBe(401);
  });

  it('given a key scoped to a website created while the website is deleted, then the key either predates the delete or is refused', async () => {
    const { a, b, key } = setup;
    for (let round = 0; round < 5; round++) {
      const w = (await call(a, 'POST', '/api/v1/websites', { key, body: { name: `Short ${round}`, url: `https://short${round}.example.com` } })).body
        .website.id;
      const [created, deleted] = await Promise.all([
        call(a, 'POST', '/api/v1/api-keys', { key, body: { name: `scoped ${round}`, website_ids: [w] } }),
        call(b ?? a, 'DELETE', `/api/v1/websites/${w}`, { key }),
      ]);
      expect(deleted.status).toBe(200);
      if (created.status === 201) {
        // decided before the delete on the organization's stream: the log says so
        const log = await a.rt.database
          .db('aivis_events')
          .whereIn('type', ['ApiKeyCreated', 'WebsiteStatusChanged'])
          .orderBy('position')
          .select('type', 'data');
        const order = log
          .filter((e: { type: string; data: Record<string, unknown> }) => e.data.api_key_id === created.body.id || e.data.website_id === w)
          .map((e: { type: string }) => e.type);
        expect(order).toEqual(['ApiKeyCreated', 'WebsiteStatusChanged']);
      } else {
        expect(created.status).toBe(400);
        expect(created.body).toEqual({ error: `website_ids: ${w} is not a website of this organization` });
      }
    }
  });

  it('given one website deleted N times at once, then one 200 and N-1 refused, one delete in the log', async () => {
    const { a, key } = setup;
    const w = (await call(a, 'POST', '/api/v1/websites', { key, body: { name: 'Twice gone', url: 'https://twice.example.com' } })).body.website.id;
    const rs = await race('DELETE', `/api/v1/websites/${w}`, () => ({}));
    expect(rs.filter((r) => r.status === 200)).toHaveLength(1);
    // refused by the decider (404), or by the access check once the delete is visible (403)
    for (const r of losers(rs, 200)) expect([403, 404]).toContain(r.status);
    expect(await eventsOf('WebsiteStatusChanged', (d) => d.website_id === w && d.status === 'deleted')).toHaveLength(1);
  });
});
