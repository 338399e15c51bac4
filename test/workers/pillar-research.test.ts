import { describe, expect, it } from 'vitest';
import { FactsPage, type FactView } from '../../queries/knowledge/views';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { MODEL_IDS } from '../../src/domain/models';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { pillarResearchJob, pillarTerms, sentences, stem } from '../../src/workers/pillar-research';
import { buildSite, importAnswers } from '../support/answers';
import { onRealPostgres } from '../support/db';
import { useInstanceOverNats, useTwoInstancesOverNats } from '../support/nats-instances';
import { useStarted } from '../support/started';
import { allowLoopback, type FixtureServer, guardConnections, startFixtureServer } from '../support/net';
import { offlineResearch } from '../support/knowledge';
import { call, type TestServer } from '../support/server';
import { jobEnded } from '../support/jobs';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

const SITE_HOST = 'https://www.acme-research.example.com';

const HOME = `<!doctype html><html><head><title>Acme</title><style>.price{color:red}</style><script>var pricing = "not a fact";</script></head>
<body><nav><a href="/pricing">Pricing plans</a> <a href="/careers">Careers</a> <a href="https://elsewhere.example.net/pricing">Partner pricing</a></nav>
<h1>Acme rockets</h1><p>Acme builds reusable rockets for small satellites.</p>
<p>Acme pricing starts at 5,000 dollars per launch &amp; includes insurance.</p></body></html>`;
const PRICING = `<html><body><h2>Plans</h2><ul><li>The Starter plan costs 5,000 dollars per launch.</li>
<li>The Pro plan adds priority launch windows for 9,000 dollars.</li><li>Contact sales for anything else.</li></ul></body></html>`;

describe('pillar research over NATS', () => {
  const net = guardConnections();
  let fixture: FixtureServer;
  let s: TestServer;
  let key: string;
  const served: string[] = [];
  useStarted(
    () =>
      startFixtureServer((req, res) => {
        served.push(req.url ?? '');
        const body = req.url === '/' ? HOME : req.url === '/pricing' ? PRICING : null;
        res.writeHead(body ? 200 : 404, { 'content-type': 'text/html' });
        res.end(body ?? 'not found');
      }),
    (x) => (fixture = x),
  );
  useInstanceOverNats(
    () => {
      // the website's pages are served by the local fixture server, reached through the real safe fetcher
      const fetch = createSafeFetcher({ allowAddress: allowLoopback });
      const outbound = { fetch: (url: string, init?: Parameters<typeof fetch>[1]) => fetch(url.replace(SITE_HOST, fixture.url), init) };
      return { runtime: { jobs: { specs: [pillarResearchJob({ outbound })] } } };
    },
    async (ctx) => {
      s = ctx.s;
      key = (await s.org('Research')).key;
    },
  );

  it('given answers and pages about the brand, when a pillar is created, then its candidate facts arrive pending with their provenance and the pillar becomes draft', async () => {
    const site = await buildSite(s, key, {
      name: 'Acme',
      url: SITE_HOST,
      attributes: [{ name: 'Affordability' }],
    });
    const answer = (text: string, i: number, observations?: unknown[]) => ({
      external_id: `a${i}`,
      prompt_id: site.prompts[0].id,
      model: MODEL_IDS[0],
      run_at: `2026-03-0${i + 1}T10:00:00.000Z`,
      text,
      ...(observations ? { observations } : {}),
    });
    const imp = await call(s, 'POST', '/api/v1/responses/import', {
      key,
      body: {
        website_id: site.id,
        responses: [
          answer('Acme is known for low pricing on small launches. Globex is bigger. Acme pricing is public on its website.', 0, [
            { entity_id: site.id, attribute_id: site.attributes[0].id, positive: true, text_span: 'Acme offers the lowest launch prices in Europe' },
          ]),
          // the same text as the site's: recorded as a hidden duplicate of the first one found
          answer('Rockets are loud.\n- Our pricing is fair.\n- **Acme pricing** starts at 5,000 dollars per launch & includes insurance', 1),
          answer('Globex pricing is opaque, says nobody about the brand.', 2),
        ],
      },
    });
    expect(imp.status, JSON.stringify(imp.body)).toBe(201);
    const p = await call(s, 'POST', '/api/v1/knowledge-base/pillars', {
      key,
      body: { website_id: site.id, name: 'Pricing', description: 'Launch prices' },
    });
    expect(p.body).toMatchObject({ created: true, pillar: { status: 'researching' } });
    const pillarId = p.body.pillar.id as string;

    const done = await until('the pillar to be researched', async () => {
      const r = await call(s, 'GET', '/api/v1/knowledge-base/pillars', { key, query: { website_id: site.id } });
      const pillar = r.body.pillars.find((x: { id: string }) => x.id === pillarId);
      return pillar?.status === 'draft' && pillar;
    });
    expect(done.last_researched_at).toEqual(expect.any(String));
    const all = FactsPage.parse(
      (
        await call(s, 'GET', '/api/v1/knowledge-base/facts', {
          key,
          query: { website_id: site.id, include_oracle: true, include_duplicates: true, page_size: 100 },
        })
      ).body,
    ).facts;
    const by = (type: string) => all.filter((f) => f.source_type === type);
    expect(all.every((f) => f.review_status === 'pending' && f.pillar_id === pillarId)).toBe(true);

    // answers: sentences naming the brand and the pillar, with the answer's id and the sentence as quote
    const fromAnswers = by('ai_response');
    expect(fromAnswers.map((f) => f.text).sort()).toEqual([
      'Acme is known for low pricing on small launches.',
      'Acme pricing is public on its website.',
      'Acme pricing starts at 5,000 dollars per launch & includes insurance',
    ]);
    for (const f of fromAnswers) {
      expect(f.response_id).toEqual(expect.any(String));
      expect(f.source_quote).toBe(f.text);
    }
    // automated analysis of the answers: the brand's observation about prices
    expect(by('oracle').map((f) => f.text)).toEqual(['Acme offers the lowest launch prices in Europe']);
    // the website's own pages: the home page and the pricing page it links (not careers, not another site's)
    const fromSite = by('site');
    expect(fromSite.map((f) => [f.text, f.source_url]).sort()).toEqual(
      [
        ['Acme pricing starts at 5,000 dollars per launch & includes insurance.', SITE_HOST],
        ['The Starter plan costs 5,000 dollars per launch.', `${SITE_HOST}/pricing`],
        ['The Pro plan adds priority launch windows for 9,000 dollars.', `${SITE_HOST}/pricing`],
      ].sort(),
    );
    expect(served.sort()).toEqual(['/', '/pricing']);
    expect(net.attempts.every((ip) => ip === '127.0.0.1')).toBe(true);
    // the home page says what an answer said (but for the full stop): the page's fact is the hidden duplicate of the answer's
    const dups = all.filter((f) => f.duplicate_of !== null);
    expect(dups.map((d) => [d.source_type, d.text])).toEqual([['site', 'Acme pricing starts at 5,000 dollars per launch & includes insurance.']]);
    expect(all.find((f) => f.id === dups[0].duplicate_of)).toMatchObject({ source_type: 'ai_response', duplicate_of: null });

    // without include_oracle and include_duplicates, the listing hides analysis facts and duplicates
    const plain = (await call(s, 'GET', '/api/v1/knowledge-base/facts', { key, query: { website_id: site.id, page_size: 100 } })).body
      .facts as FactView[];
    expect(plain.some((f) => f.source_type === 'oracle' || f.duplicate_of !== null)).toBe(false);
    // the job ended, once
    expect(await jobEnded(s.rt, pillarId)).toBe('succeeded');
    expect(await s.rt.database.db('aivis_events').where('type', 'PillarResearched').whereRaw(`data->>'pillar_id' = ?`, [pillarId])).toHaveLength(1);

    // a step delivered again (a redelivery, a second instance) records nothing twice
    const spec = pillarResearchJob({ outbound: { fetch: createSafeFetcher({ allowAddress: allowLoopback }) } });
    const requested = (await s.rt.store.readStream(`pillar_research-${pillarId}`)).find((e) => e.type === 'PillarResearchRequested')!;
    const state = { requested: requested.data as never, done: new Set<string>() };
    const step = spec.next(state)!;
    expect(step.name).toBe('answers');
    const before = (await s.rt.store.readStream(`knowledge-${site.id}`)).length;
    const out = await step.run({
      jobId: pillarId,
      state,
      command: { store: s.rt.store, organizationId: requested.metadata.organization_id, websiteId: site.id, actor: SYSTEM_ACTOR },
      attempt: 2,
      db: s.rt.database.db,
    });
    expect(out.events).toEqual([{ type: 'PillarResearchStepDone', data: { job_id: pillarId, step: 'answers', facts: 0 } }]);
    expect((await s.rt.store.readStream(`knowledge-${site.id}`)).length).toBe(before);

    // the same pillar again: created false, and no second research
    const again = await call(s, 'POST', '/api/v1/knowledge-base/pillars', { key, body: { website_id: site.id, name: 'PRICING' } });
    expect(again.body).toMatchObject({ created: false, pillar: { id: pillarId, status: 'draft' } });
    expect(
      await s.rt.database.db('aivis_events').where('type', 'PillarResearchRequested').whereRaw(`data->>'pillar_id' = ?`, [pillarId]),
    ).toHaveLength(1);
  }, 60_000);

  it('given a sentence found twice, then the second is a hidden duplicate of the first', async () => {
    const site = await buildSite(s, key, { name: 'Acme', url: SITE_HOST });
    const imp = await call(s, 'POST', '/api/v1/responses/import', {
      key,
      body: {
        website_id: site.id,
        responses: ['Acme pricing is transparent.', 'Acme pricing is transparent!'].map((text, i) => ({
          external_id: `d${i}`,
          prompt_id: site.prompts[0].id,
          model: MODEL_IDS[0],
          run_at: `2026-03-0${i + 1}T10:00:00.000Z`,
          text,
        })),
      },
    });
    expect(imp.status).toBe(201);
    const p = (await call(s, 'POST', '/api/v1/knowledge-base/pillars', { key, body: { website_id: site.id, name: 'Pricing' } })).body.pillar;
    await until(
      'draft',
      async () =>
        (await call(s, 'GET', '/api/v1/knowledge-base/pillars', { key, query: { website_id: site.id } })).body.pillars[0].status === 'draft',
    );
    const facts = (
      await call(s, 'GET', '/api/v1/knowledge-base/facts', { key, query: { website_id: site.id, include_duplicates: true, pillar_id: p.id } })
    ).body.facts as FactView[];
    const answerFacts = facts.filter((f) => f.source_type === 'ai_response');
    expect(answerFacts).toHaveLength(2);
    const [dup] = answerFacts.filter((f) => f.duplicate_of !== null);
    const [orig] = answerFacts.filter((f) => f.duplicate_of === null);
    expect(dup.duplicate_of).toBe(orig.id);
  }, 60_000);
});

describe('pillar research: what counts as about the pillar', () => {
  it('given words, then plurals and -ing forms share a stem', () => {
    expect(stem('prices')).toBe(stem('price'));
    expect(stem('pricing')).toBe(stem('price'));
    expect([...pillarTerms('Pricing & Plans', 'What it costs')]).toEqual([stem('pricing'), stem('plans'), stem('costs')]);
  });
  it('given a text, then sentences are split, list marks dropped, and too short ones left out', () => {
    expect(sentences('- **Acme** is a rocket company. Yes.\n2) Acme launches from French Guiana!')).toEqual([
      'Acme is a rocket company.',
      'Acme launches from French Guiana!',
    ]);
  });
});

if (!onRealPostgres) console.log('pillar research: PGlite read models, NATS bus');

const twoInstances = onPostgresServer('pillar research on two instances', 'two instances need a shared server');

twoInstances('pillar research over NATS, two instances', () => {
  let a: TestServer;
  let b: TestServer;
  useTwoInstancesOverNats(
    () => ({ runtime: offlineResearch() }),
    (ctx) => ({ a, b } = ctx),
  );

  it('given pillars created on both instances, then every one is researched exactly once and becomes draft', async () => {
    const { key } = await a.org('Research x2');
    const site = await buildSite(a, key, { name: 'Acme', url: SITE_HOST });
    await importAnswers(a, key, site.id, [
      {
        prompt_id: site.prompts[0].id,
        model: MODEL_IDS[0],
        run_at: '2026-03-01T10:00:00.000Z',
        text: 'Acme support is open every day. Acme security is audited yearly. Acme pricing is fair.',
      },
    ]);
    const names = ['Support', 'Security', 'Pricing', 'Support', 'SECURITY', 'pricing'];
    const rs = await Promise.all(
      names.map((name, i) => call(i % 2 ? b : a, 'POST', '/api/v1/knowledge-base/pillars', { key, body: { website_id: site.id, name } })),
    );
    const ids = [...new Set(rs.map((r) => r.body.pillar.id as string))];
    expect(ids).toHaveLength(3);
    for (const id of ids) expect(await jobEnded(a.rt, id)).toBe('succeeded');
    // the jobs read model saw the ends; the knowledge read model of the other instance follows within moments
    const statuses = async () =>
      (await call(b, 'GET', '/api/v1/knowledge-base/pillars', { key, query: { website_id: site.id } })).body.pillars.map(
        (p: { status: string }) => p.status,
      );
    await until('every pillar draft on the other instance', async () => (await statuses()).every((x: string) => x === 'draft'), 5000, 50);
    expect(await statuses()).toEqual(['draft', 'draft', 'draft']);
    const db = a.rt.database.db;
    for (const id of ids) {
      expect(await db('aivis_events').where('type', 'PillarResearched').whereRaw(`data->>'pillar_id' = ?`, [id])).toHaveLength(1);
      const facts = await db('rm_kb_facts').where('pillar_id', id).select('text');
      expect(facts).toHaveLength(1);
    }
  }, 60_000);
});
