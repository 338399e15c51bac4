import { expect, it } from 'vitest';
import { buildSite, importAnswers, type Site, acmeAgainstGlobex } from '../support/answers';
import { call, type TestServer, useTwoInstances } from '../support/server';
import { onPostgresServer } from '../support/suites';

// Two instances over one database: needs a real server.
const suite = onPostgresServer('two-instance metrics test', 'two instances need a shared server');

/**
 * Metrics behind a round-robin client: every import's answer, whichever instance took it, is followed by metric reads
 * on the other instance, which must count exactly the answers imported so far (each instance holds the website's
 * facts in its own process: one that served them from what it held before the import would count fewer).
 */
suite('metrics on two instances over one database', () => {
  let site: Site;
  const two = useTwoInstances('Round robin', async ({ a, key }) => {
    site = await buildSite(a, key, acmeAgainstGlobex('rr', [{ text: 'p1' }, { text: 'p2' }]));
  });

  const metric = (s: TestServer, family: string, kind: string, filters: object) =>
    call(s, 'POST', `/api/v1/metrics/${family}/${kind}`, { key: two.key, body: { website_id: site.id, filters } });

  it('given imports alternating between the instances, when the other instance reads metrics right after each answer, then it counts every imported answer', async () => {
    const { a, b, key } = two;
    const range = { start_date: '2026-05-01', end_date: '2026-05-31' };
    // both instances load the (empty) website's facts before any import
    for (const s of [a, b]) expect((await metric(s, 'mention-rate', 'cumulative', range)).body.responses).toBe(0);
    let imported = 0;
    let acme = 0;
    let globex = 0;
    let cited = 0;
    for (let round = 0; round < 8; round++) {
      const writer = round % 2 === 0 ? a : b;
      const reader = writer === a ? b : a;
      // rounds 0-3 add to days already held (1 and 2 May), later rounds add new days too
      const day = round < 4 ? 1 + (round % 2) : 1 + round;
      const responses = Array.from({ length: 3 + round }, (_, i) => {
        const both = i % 3 === 0;
        return {
          prompt_id: site.prompts[i % 2].id,
          model: i % 2 ? 'claude' : 'chatgpt',
          run_at: `2026-05-${String(day).padStart(2, '0')}T${String(i % 24).padStart(2, '0')}:${String(round).padStart(2, '0')}:00Z`,
          text: both ? 'Acme first, then Globex.' : 'Acme alone.',
          citations: i % 4 === 0 ? ['https://acme-rr.example.com/pricing'] : [],
        };
      });
      await importAnswers(writer, key, site.id, responses);
      imported += responses.length;
      acme += responses.length;
      globex += responses.filter((x) => x.text.includes('Globex')).length;
      cited += responses.filter((x) => x.citations.length > 0).length;

      const mr = await metric(reader, 'mention-rate', 'cumulative', range);
      expect(mr.status, JSON.stringify(mr.body)).toBe(200);
      expect(mr.body.responses, `round ${round}: answers counted by the other instance`).toBe(imported);
      expect(mr.body.data.Acme.sample.mention_rate.numerator).toBe(acme);
      expect(mr.body.data.Globex.sample.mention_rate.numerator).toBe(globex);
      const cr = await metric(reader, 'citation-rate', 'cumulative', range);
      expect(cr.body.data.Acme.sample.citation_rate).toMatchObject({ numerator: cited, denominator: imported });
      const series = await metric(reader, 'share-of-voice', 'time-series', range);
      const perDay = (series.body.data as { responses: number }[]).reduce((n, d) => n + d.responses, 0);
      expect(perDay, `round ${round}: the other instance's series`).toBe(imported);
      // and the writer, which answered the import, agrees
      expect((await metric(writer, 'mention-rate', 'cumulative', range)).body.responses).toBe(imported);
    }
  });
});
