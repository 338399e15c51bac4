import { describe, expect, it } from 'vitest';
import { onRealPostgres } from '../support/db';
import { sharedFirst, useRaceSetup } from '../support/races';
import { call } from '../support/server';

// Tracking's rule "one item per URL of a website" raced over two instances on one database: each instance
// serialises its own writes to a stream, so only the registry stream's expected revision can settle the race.
if (!onRealPostgres) console.log('content races: one instance on PGlite (a second needs a shared Postgres server)');

const N = 8;

describe('content tracking under concurrent calls on two instances', () => {
  const setup = useRaceSetup('ContentRaces', { name: 'Racer', url: 'https://content-racer.example.com' }, sharedFirst);

  it('given one URL (in tracking-parameter variants) tracked N times at once, then one item exists and every call names it', async () => {
    const { a, key, site, on } = setup;
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        call(on(i), 'POST', '/api/v1/content/track', {
          key,
          body: { website_id: site, urls: [{ url: `https://www.content-racer.example.com/guide/?utm_campaign=${i}`, title: `T${i}` }] },
        }),
      ),
    );
    for (const r of rs) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const created = rs.flatMap((r) => r.body.created);
    expect(created).toHaveLength(1);
    const skipped = rs.flatMap((r) => r.body.skipped);
    expect(skipped).toHaveLength(N - 1);
    for (const x of skipped) expect(x).toMatchObject({ content_id: created[0].content_id, type: 'imported' });
    const events = await a.rt.database
      .db('aivis_events')
      .where('type', 'ContentTracked')
      .whereRaw(`data->>'website_id' = ?`, [site])
      .count({ n: '*' });
    expect(Number(events[0].n)).toBe(1);
  });
});
