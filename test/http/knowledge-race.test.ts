import { describe, expect, it } from 'vitest';
import { useRaceSetup } from '../support/races';
import { onRealPostgres } from '../support/db';
import { offlineResearch } from '../support/knowledge';
import { call, startServer } from '../support/server';

// The knowledge base's get-or-create and text changes, raced over two instances on one database (real Postgres): each
// instance serialises its own writes to a stream, so only the stream's expected version settles the two.
if (!onRealPostgres) console.log('knowledge races: one instance on PGlite (a second instance needs a shared Postgres server)');

const N = 8;

describe('knowledge base rules under concurrent requests on two instances', () => {
  const setup = useRaceSetup('KB races', { name: 'Racer', url: 'https://kb-racer.example.com' }, (join) =>
    startServer({}, {}, join, offlineResearch()),
  );

  it('given one pillar name sent N times at once in different cases, then one pillar, one created: true, every answer names it', async () => {
    const { a, key, site, on } = setup;
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        call(on(i), 'POST', '/api/v1/knowledge-base/pillars', { key, body: { website_id: site, name: ['Pricing', 'pricing', 'PRICING '][i % 3] } }),
      ),
    );
    expect(rs.map((r) => r.status)).toEqual(Array(N).fill(200));
    expect(rs.filter((r) => r.body.created === true)).toHaveLength(1);
    expect(new Set(rs.map((r) => r.body.pillar.id)).size).toBe(1);
    const events = await a.rt.database.db('aivis_events').where('type', 'PillarCreated').whereRaw(`data->>'website_id' = ?`, [site]);
    expect(events).toHaveLength(1);
  });

  it('given one fact whose text N requests change at once, then one new fact, and the others answer 404 (archived)', async () => {
    const { a, key, site, on } = setup;
    const f = (await call(a, 'POST', '/api/v1/knowledge-base/facts', { key, body: { website_id: site, text: 'Acme has 5 plans.' } })).body.fact;
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        call(on(i), 'PATCH', `/api/v1/knowledge-base/facts/${f.id}`, { key, body: { text: `Acme has ${6 + i} plans.` } }),
      ),
    );
    expect(rs.map((r) => r.status).sort()).toEqual([200, ...Array(N - 1).fill(404)]);
    const recorded = await a.rt.database.db('aivis_events').where('type', 'FactRecorded').whereRaw(`data->>'replaces' = ?`, [f.id]);
    expect(recorded).toHaveLength(1);
  });
});
