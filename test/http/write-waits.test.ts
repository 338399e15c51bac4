import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSite, importAnswers, type Site } from '../support/answers';
import { onRealPostgres } from '../support/db';
import { call, caughtUp, startServer, type TestServer } from '../support/server';

// Embedded, the re-derivation's transaction holds PGlite's one connection: every request waits for it there.
if (!onRealPostgres) console.log("write-waits test skipped: DATABASE_URL unset (a re-derivation holds PGlite's only connection)");

describe.runIf(onRealPostgres)('a write waits for what its caller reads, not for a re-derivation', () => {
  let s: TestServer;
  let key: string;
  let site: Site;
  // long enough that a write which waited for the re-derivation would fail the 5x check below (1.5 s alone, against ~20 ms)
  const HISTORY = 50_000;

  beforeAll(async () => {
    s = await startServer();
    key = (await s.org('Large')).key;
    site = await buildSite(s, key, {
      name: 'Acme',
      url: 'https://acme-large.example.com',
      competitors: [{ name: 'Globex', url: 'https://globex-large.example.net' }],
    });
    await importAnswers(s, key, site.id, [
      { prompt_id: site.prompts[0].id, model: 'chatgpt', run_at: '2026-01-01T00:00:00Z', text: 'Acme, then Newco.' },
    ]);
    // a large history, written straight into the answers read model (imported over HTTP it would take minutes here):
    // what a re-derivation reads
    await s.rt.database.db.raw(
      `insert into rm_responses (id, website_id, prompt_id, model, run_at, text, citations, products, source, export_json, export_entities)
       select gen_random_uuid(), ?, ?, 'chatgpt', timestamptz '2025-06-01' + make_interval(secs => i * 60),
              case when i % 3 = 0 then 'Newco first, Acme second, Globex too. ' else 'Acme and Globex are both fine. ' end || repeat('Filler words about CRMs. ', 20),
              '[]', '[]', 'import', '', ''
         from generate_series(1, ?) as i`,
      [site.id, site.prompts[0].id, HISTORY],
    );
  }, 120_000);
  afterAll(async () => s?.close());

  it('given a large history, when a competitor is added, then it answers while the re-derivation runs and is listed right after; the metrics have it once re-derived', async () => {
    // when
    const t0 = performance.now();
    const added = await call(s, 'POST', '/api/v1/competitors', {
      key,
      body: { website_id: site.id, name: 'Newco', url: 'https://newco-large.example.org' },
    });
    const answeredMs = performance.now() - t0;
    // then: answered, and the history not yet re-derived with the new competitor (it commits whole)
    expect(added.status).toBe(201);
    const newco = added.body.competitor.id as string;
    const entities = async () => (await s.rt.database.db('rm_fact_sites').where('website_id', site.id).first('entities')).entities as string[];
    expect(await entities()).not.toContain(newco);
    const listed = await call(s, 'GET', '/api/v1/competitors', { key, query: { website_id: site.id } });
    expect(listed.body.competitors.map((c: { name: string }) => c.name)).toEqual(['Globex', 'Newco']);
    // the re-derivation: seconds, against the write's milliseconds
    await caughtUp(s, ['answers'], 120_000);
    const rederivedMs = performance.now() - t0;
    console.log(
      `add competitor answered in ${answeredMs.toFixed(0)} ms; the re-derivation of ${HISTORY + 1} answers took ${(rederivedMs / 1000).toFixed(1)} s`,
    );
    expect(rederivedMs).toBeGreaterThan(5 * answeredMs);
    expect(await entities()).toEqual([site.id, site.competitors[0].id, newco]);
    const m = await call(s, 'POST', '/api/v1/metrics/mention-rate/cumulative', {
      key,
      body: { website_id: site.id, filters: { start_date: '2025-01-01' } },
    });
    expect(m.body).toMatchObject({
      responses: HISTORY + 1,
      data: { Acme: { mention_rate: 100 }, Newco: { mention_rate: expect.closeTo((100 * (Math.floor(HISTORY / 3) + 1)) / (HISTORY + 1), 3) } },
    });
  }, 180_000);
});
