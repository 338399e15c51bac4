import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { describe, expect, it } from 'vitest';
import { CreditUsageView } from '../../queries/credits/views';
import { SeoJobView, SeoSubmittedView } from '../../queries/seo/views';
import type { AppDeps, Caller } from '../../src/app/context';
import {
  EntitlementCache,
  ENTITLEMENT_UNAVAILABLE,
  getSeoRecommendations,
  NOT_PUBLIC_HTTPS,
  SEO_NOT_ENABLED,
  type SeoOptions,
  submitSeoRecommendations,
} from '../../src/app/seo';
import { DomainErrorException } from '../../src/domain/errors';
import { ADMIN_PERMISSIONS, type AccessLevel, PERMISSION_DENIED, type Principal } from '../../src/domain/principal';
import { RateLimiter } from '../../src/limits/rate';
import type { Outbound } from '../../src/net/safe-fetch';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { seoJob } from '../../src/workers/seo';
import { probeJob } from '../../src/workers/probe';
import { apiKey, closeAll, connectAll, toolOk } from '../mcp/support';
import { allowLoopback, fakeResolver, type FixtureServer, startFixtureServer } from '../support/net';
import { gate } from '../support/jobs';
import { importAnswers } from '../support/answers';
import { refusedWithoutWrite } from '../support/http';
import { useInstanceOverNats, useTwoInstancesOverNats } from '../support/nats-instances';
import { useStarted } from '../support/started';
import { call, caughtUp, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { until } from '../support/until';
import { onRealPostgres } from '../support/db';

const PAGE = `<!doctype html><html><head><title>Running shoes for flat feet</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Stride"}</script></head>
<body><h1>Running shoes for flat feet</h1><p>The best running shoes for flat feet give arch support and stability.</p>
<h2>Why stability matters</h2><p>Flat feet roll inward; stability shoes correct it.</p></body></html>`;

let fixture: FixtureServer;
let s: TestServer;
let w: World;
/** the entitlement source: flipped to fail in the cache tests */
let checkFails = false;
let clock = Date.now();
const checks: string[] = [];
const seo: SeoOptions = {
  entitlements: new EntitlementCache(
    async (org, feature) => {
      checks.push(org);
      if (checkFails) throw new Error('entitlements service down');
      const row = await s.rt.database.db('rm_organizations').where('id', org).first('features');
      return row.features.includes(feature);
    },
    () => clock,
  ),
  organizationPerMinute: 1000,
  websitePerMinute: 1000,
};
let outbound: Outbound;
const held = { gate: null as ReturnType<typeof gate> | null };
const dbRef = {} as { db: Knex };

useStarted(
  () =>
    startFixtureServer((req, res) => {
      if (req.url === '/missing') {
        res.writeHead(404).end('no');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    }),
  (x) => (fixture = x),
);
useInstanceOverNats(
  () => {
    outbound = {
      fetch: createSafeFetcher({ resolver: fakeResolver({ 'intranet.example.com': ['10.1.2.3'] }), allowAddress: allowLoopback }),
      baseUrl: (host: string) => (host === 'shop.example.com' ? fixture.url : `https://${host}`),
    };
    return {
      app: { outbound, seo },
      runtime: { jobs: { specs: [probeJob(), seoJob(dbRef, { beforeStep: async () => held.gate?.wait() })] } },
    };
  },
  async (ctx) => {
    s = ctx.s;
    dbRef.db = s.rt.database.db;
    w = await buildWorld(s);
  },
);

const SEO_PATH = '/api/v1/seo/recommendations';
const submit = (key: string, body: unknown) => call<any>(s, 'POST', SEO_PATH, { key, body });
const poll = (key: string, jobId: string, websiteId: string) =>
  call<any>(s, 'GET', `/api/v1/seo/recommendations/${jobId}`, { key, query: { website_id: websiteId } });
const draft = { title: 'Running shoes for flat feet', body: '# Running shoes\n\nStride makes running shoes with arch support for flat feet.' };
async function finished(key: string, jobId: string, websiteId: string) {
  return until('the job ends', async () => {
    const r = await poll(key, jobId, websiteId);
    return r.status === 200 && (r.body.status === 'succeeded' || r.body.status === 'failed') ? SeoJobView.parse(r.body) : undefined;
  });
}

/** Every job of the website ended: nothing more will be appended for them. */
const quiet = (websiteId: string) =>
  until("the website's jobs end", async () => {
    await caughtUp(s, ['seo']);
    const open = await s.rt.database.db('rm_seo_jobs').where('website_id', websiteId).whereIn('status', ['queued', 'running']).first('id');
    return !open || undefined;
  });

describe('SEO recommendations', () => {
  it("given a draft and the website's prompts and answers, when submitted and polled, then the job succeeds with recommendations on prompts, competitors named instead of the brand and structure; one credit charged", async () => {
    const site = w.a.a1;
    const prompt = await call(s, 'POST', '/api/v1/prompts', { key: w.a.key, body: { website_id: site, text: 'best running shoes for flat feet' } });
    expect(prompt.status).toBe(201);
    const comp = await call(s, 'POST', '/api/v1/competitors', {
      key: w.a.key,
      body: { website_id: site, name: 'Zoomer', url: 'https://zoomer.example.org' },
    });
    expect(comp.status).toBe(201);
    await importAnswers(
      s,
      w.a.key,
      site,
      [1, 2, 3].map((i) => ({
        prompt_id: prompt.body.prompt.id,
        model: 'chatgpt',
        run_at: new Date(Date.now() - i * 3_600_000).toISOString(),
        text: 'For flat feet, Zoomer makes the most stable running shoes.',
      })),
    );
    await caughtUp(s, ['answers', 'catalog']);

    const r = await submit(w.a.key, { website_id: site, request_id: 'draft-1', draft });
    expect(r.status).toBe(202);
    expect(SeoSubmittedView.parse(r.body)).toEqual({ job_id: expect.any(String), status: 'queued' });
    const job = await finished(w.a.key, r.body.job_id, site);
    expect(job.status).toBe('succeeded');
    expect(job.completed_at).not.toBeNull();
    const byCategory = (c: string) => job.recommendations.filter((x) => x.category === c);
    expect(byCategory('prompt_coverage')[0]).toMatchObject({ title: expect.stringContaining('best running shoes for flat feet') });
    expect(byCategory('prompt_coverage')[0].excerpt).toContain('arch support');
    expect(byCategory('competitor_gap')[0]).toMatchObject({ severity: 'high', title: expect.stringContaining('Zoomer instead of Acme') });
    expect(byCategory('faq')).toHaveLength(1);
    expect(byCategory('brand')).toHaveLength(1);
    // a draft has no meta description or markup to judge
    expect(byCategory('meta_description')).toHaveLength(0);
    expect(job.recommendations.map((x) => x.severity)).toEqual(
      [...job.recommendations.map((x) => x.severity)].sort((a, b) => ['high', 'medium', 'low'].indexOf(a) - ['high', 'medium', 'low'].indexOf(b)),
    );

    await caughtUp(s, ['credits', 'activity']);
    const [client] = await connectAll(s, apiKey(w.a.key));
    const usage = CreditUsageView.parse(await toolOk(client, 'get_credit_usage', { range: '24h', website_id: site }));
    await closeAll(client);
    expect(usage.by_kind.find((k) => k.kind === 'seo_recommendation')).toEqual({ kind: 'seo_recommendation', credits: 1, events: 1 });
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'seo_recommendation_job' } });
    expect(feed.body.data.map((e: any) => e.change_type).sort()).toEqual(['completed', 'created']);
  });

  it('given a draft whose heading or sentence is longer than its cut and made of emoji, when submitted, then 202 and the job succeeds with recommendations quoting whole emoji', async () => {
    const site = w.a.a1;
    const prompt = await call(s, 'POST', '/api/v1/prompts', { key: w.a.key, body: { website_id: site, text: 'waterproof hiking boots for winter' } });
    expect(prompt.status).toBe(201);
    const emoji = (n: number) => '😀'.repeat(n);

    // a heading is kept to 500 characters: 500 falls inside the 250th emoji
    const heading = await submit(w.a.key, { website_id: site, request_id: 'emoji-heading', draft: { title: 'Emoji', body: `## Z${emoji(300)}` } });
    expect(heading.status).toBe(202);
    const headed = await finished(w.a.key, heading.body.job_id, site);
    expect(headed.status).toBe('succeeded');
    expect(headed.recommendations.map((r) => r.category)).toContain('faq');

    // an excerpt is kept to 300 characters: 300 falls inside the 150th emoji of the sentence that answers the prompt
    const body = `# Winter boots\n\n# Z${emoji(200)}\n\nZ${emoji(200)} waterproof hiking boots keep feet dry in winter.`;
    const sentence = await submit(w.a.key, { website_id: site, request_id: 'emoji-sentence', draft: { title: 'Winter boots', body } });
    expect(sentence.status).toBe(202);
    const job = await finished(w.a.key, sentence.body.job_id, site);
    expect(job.status).toBe('succeeded');
    expect(job.recommendations.find((r) => r.category === 'prompt_coverage')).toMatchObject({
      title: expect.stringContaining('waterproof hiking boots for winter'),
      excerpt: `Z${emoji(149)}`,
    });
    expect(job.recommendations.find((r) => r.category === 'headings')).toMatchObject({
      title: 'The page has 2 H1 headings',
      excerpt: `Z${emoji(149)}`,
    });
  });

  it('given a public HTTPS page, then it is fetched through the safe fetcher and its structure judged; other schemes, private addresses and pages that do not answer are 400 with nothing written', async () => {
    const r = await submit(w.a.key, { website_id: w.a.a2, request_id: 'url-1', url: 'https://shop.example.com/shoes#top' });
    expect(r.status).toBe(202);
    const job = await finished(w.a.key, r.body.job_id, w.a.a2);
    const cats = job.recommendations.map((x) => x.category);
    expect(cats).toContain('meta_description');
    expect(cats).toContain('faq');
    expect(cats).not.toContain('schema');
    expect(cats).not.toContain('title');
    await refusedWithoutWrite(
      s,
      w.a.key,
      [
        ['http://shop.example.com/shoes', NOT_PUBLIC_HTTPS],
        ['ftp://shop.example.com/shoes', NOT_PUBLIC_HTTPS],
        ['https://10.0.0.1/admin', NOT_PUBLIC_HTTPS],
        ['https://[::1]/', NOT_PUBLIC_HTTPS],
        ['https://localhost/', NOT_PUBLIC_HTTPS],
        ['https://user:pw@shop.example.com/', NOT_PUBLIC_HTTPS],
        ['https://intranet.example.com/', NOT_PUBLIC_HTTPS],
        ['https://shop.example.com/missing', 'url: the page answered 404'],
        ['not a url', NOT_PUBLIC_HTTPS],
      ].map(([url, error]) => ({ method: 'POST', path: SEO_PATH, body: { website_id: w.a.a2, request_id: `bad-${url}`, url }, status: 400, error })),
    );
  });

  it('given a request_id, then the same input answers the same job and other input 409; url and draft are exclusive; every bad field is named', async () => {
    const site = w.a.a2;
    const first = await submit(w.a.key, { website_id: site, request_id: 'same', draft });
    const again = await submit(w.a.key, { website_id: site, request_id: 'same', draft });
    expect(again.status).toBe(202);
    expect(again.body.job_id).toBe(first.body.job_id);
    const other = await submit(w.a.key, { website_id: site, request_id: 'same', draft: { ...draft, title: 'Other' } });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('request_id reused with a different request');
    const racing = await Promise.all(Array.from({ length: 6 }, () => submit(w.a.key, { website_id: site, request_id: 'race', draft })));
    expect(new Set(racing.map((x) => x.body.job_id)).size).toBe(1);
    expect(racing.every((x) => x.status === 202)).toBe(true);
    for (const [body, field] of [
      [{ website_id: site, request_id: 'x' }, 'url'],
      [{ website_id: site, request_id: 'x', draft, url: 'https://shop.example.com/' }, 'url'],
      [{ website_id: site, draft }, 'request_id'],
      [{ website_id: 'nope', request_id: 'x', draft }, 'website_id'],
      [{ website_id: site, request_id: 'x', draft: { title: '', body: 'b' } }, 'draft.title'],
      [{ website_id: site, request_id: 'x', draft: { title: 't', body: 'x'.repeat(100_001) } }, 'draft.body'],
      [{ website_id: site, request_id: 'x', draft, extra: 1 }, 'extra'],
    ] as const) {
      const bad = await submit(w.a.key, body);
      expect(bad.status, field).toBe(400);
      expect(bad.body.error, field).toContain(field);
    }
  });

  it("given tenancy, then another organization's website is 403, a scoped key's other website 403, a job polled under another website 404", async () => {
    const r = await submit(w.a.scoped, { website_id: w.a.a2, request_id: 'scoped', draft });
    expect(r.status).toBe(202);
    expect((await submit(w.a.scoped, { website_id: w.a.a1, request_id: 'scoped-a1', draft })).body).toEqual({
      error: 'Unauthorized access to this website',
    });
    expect((await submit(w.b.key, { website_id: w.a.a1, request_id: 'b', draft })).status).toBe(403);
    expect((await poll(w.b.key, r.body.job_id, w.a.a2)).status).toBe(403);
    expect((await poll(w.b.key, r.body.job_id, w.b.b1)).body).toEqual({ error: 'Job not found' });
    expect((await poll(w.a.key, r.body.job_id, w.a.a1)).status).toBe(404);
    expect((await poll(w.a.key, 'not-a-uuid', w.a.a2)).status).toBe(400);
    expect((await call<any>(s, 'GET', `/api/v1/seo/recommendations/${r.body.job_id}`, { key: w.a.key })).body).toEqual({
      error: 'website_id is required',
    });
    expect((await poll(w.a.revoked, r.body.job_id, w.a.a2)).status).toBe(401);
  });

  it('given the entitlement: missing is 403; a failing check uses the cached answer for an hour past its 15 minutes, then 500 with no job created; no cached answer is 500', async () => {
    const off = await s.org('No SEO', { features: ['pitch'] });
    const offSite = (await call(s, 'POST', '/api/v1/websites', { key: off.key, body: { name: 'Off', url: 'https://off.example.com' } })).body.website
      .id;
    const refused = await submit(off.key, { website_id: offSite, request_id: 'x', draft });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe(SEO_NOT_ENABLED);

    const org = await s.org('Cache Org');
    const site = (await call(s, 'POST', '/api/v1/websites', { key: org.key, body: { name: 'Cache', url: 'https://cache.example.com' } })).body.website
      .id;
    const t0 = Date.now();
    clock = t0;
    try {
      expect((await submit(org.key, { website_id: site, request_id: 'c1', draft })).status).toBe(202);
      const asked = checks.filter((o) => o === org.organization_id).length;
      clock = t0 + 14 * 60_000;
      expect((await submit(org.key, { website_id: site, request_id: 'c2', draft })).status).toBe(202);
      expect(checks.filter((o) => o === org.organization_id).length).toBe(asked);
      checkFails = true;
      clock = t0 + 70 * 60_000;
      expect((await submit(org.key, { website_id: site, request_id: 'c3', draft })).status).toBe(202);
      clock = t0 + 76 * 60_000;
      await quiet(site);
      const before = await s.head();
      const down = await submit(org.key, { website_id: site, request_id: 'c4', draft });
      expect(down.status).toBe(500);
      expect(down.body.error).toBe(ENTITLEMENT_UNAVAILABLE);
      expect(await s.head()).toBe(before);
      // the check recovers: fresh again
      checkFails = false;
      expect((await submit(org.key, { website_id: site, request_id: 'c4', draft })).status).toBe(202);
      // another organization with nothing cached while the check fails
      const fresh = await s.org('Fresh Org');
      const freshSite = (await call(s, 'POST', '/api/v1/websites', { key: fresh.key, body: { name: 'F', url: 'https://fresh.example.com' } })).body
        .website.id;
      checkFails = true;
      await quiet(site);
      const before2 = await s.head();
      expect((await submit(fresh.key, { website_id: freshSite, request_id: 'f1', draft })).status).toBe(500);
      expect(await s.head()).toBe(before2);
    } finally {
      checkFails = false;
      clock = Date.now();
    }
  });

  it('given a signed-in user, then submitting needs content manage on the website and polling content view; below, 403 Forbidden: insufficient permissions with nothing written', async () => {
    const site = w.a.a2;
    const deps: AppDeps = { rt: s.rt, limiter: new RateLimiter(s.rt.database.db), outbound, auth: undefined as never, seo };
    const user = (content: AccessLevel): Caller => ({
      deps,
      principal: {
        kind: 'user',
        organizationId: w.a.organization_id,
        apiKeyId: null,
        userId: w.a.owner_user_id,
        websiteIds: null,
        partner: false,
        plan: 'enterprise',
        features: ['seo_recommendations'],
        permissions: { ...ADMIN_PERMISSIONS, content },
      } satisfies Principal,
    });
    const refusal = async (run: Promise<unknown>) =>
      run.then(
        () => 'allowed',
        (err) => (err instanceof DomainErrorException ? err.error.message : String(err)),
      );
    const before = await s.head();
    for (const level of ['none', 'view', 'edit'] as const)
      expect(await refusal(submitSeoRecommendations(user(level), { website_id: site, request_id: `user-${level}`, draft })), level).toBe(
        PERMISSION_DENIED,
      );
    expect(await s.head()).toBe(before);
    const admitted = await submitSeoRecommendations(user('manage'), { website_id: site, request_id: 'user-manage', draft });
    expect(admitted.job_id).toEqual(expect.any(String));
    expect(await refusal(getSeoRecommendations(user('none'), admitted.job_id, site))).toBe(PERMISSION_DENIED);
    expect((await getSeoRecommendations(user('view'), admitted.job_id, site)).job_id).toBe(admitted.job_id);
  });

  it("given the OpenAPI document, then it describes the SEO job routes (the spec's) and the credits and prompt discovery routes (extensions)", async () => {
    const doc = (await call<any>(s, 'GET', '/api/v1/openapi.json', { key: w.a.key })).body;
    const tags = (path: string, method: string) => doc.paths[path]?.[method]?.tags as string[] | undefined;
    expect(tags('/api/v1/seo/recommendations', 'post')).not.toContain('extension');
    expect(doc.paths['/api/v1/seo/recommendations'].post.requestBody.content['application/json'].schema.properties).toHaveProperty('request_id');
    expect(doc.paths['/api/v1/seo/recommendations'].post.responses).toHaveProperty('202');
    expect(tags('/api/v1/seo/recommendations/{job_id}', 'get')).not.toContain('extension');
    for (const path of ['/api/v1/credits/organization', '/api/v1/credits/website', '/api/v1/credits/group', '/api/v1/prompt-discovery/runs'])
      expect(tags(path, 'get'), path).toContain('extension');
    expect(tags('/api/v1/prompt-discovery/runs', 'post')).toContain('extension');
    expect(tags('/api/v1/prompt-discovery/runs/{run_id}/accept', 'post')).toContain('extension');
  });

  it('given the budgets: submissions and polls share the organization budget, submissions also count per website; past either 429 with Retry-After', async () => {
    const org = await s.org('Budget Org');
    const mk = async (name: string) =>
      (await call(s, 'POST', '/api/v1/websites', { key: org.key, body: { name, url: `https://${name}.example.com` } })).body.website.id;
    const [x, y] = [await mk('bx'), await mk('by')];
    const other = await s.org('Budget Other');
    const otherSite = (await call(s, 'POST', '/api/v1/websites', { key: other.key, body: { name: 'bo', url: 'https://bo.example.com' } })).body
      .website.id;
    seo.organizationPerMinute = 5;
    seo.websitePerMinute = 3;
    try {
      const waitEdge = 60_000 - (Date.now() % 60_000);
      if (waitEdge < 8000) await new Promise((r) => setTimeout(r, waitEdge + 100));
      const a1 = await submit(org.key, { website_id: x, request_id: 'b1', draft });
      expect(a1.status).toBe(202);
      expect((await submit(org.key, { website_id: x, request_id: 'b2', draft })).status).toBe(202);
      expect((await submit(org.key, { website_id: x, request_id: 'b3', draft })).status).toBe(202);
      const site = await submit(org.key, { website_id: x, request_id: 'b4', draft });
      expect(site.status).toBe(429);
      expect(Number(site.headers.get('retry-after'))).toBeGreaterThan(0);
      // the refused submission counted: 4 of 5; one poll takes the last
      expect((await poll(org.key, a1.body.job_id, x)).status).toBe(200);
      const orgWide = await submit(org.key, { website_id: y, request_id: 'b5', draft });
      expect(orgWide.status).toBe(429);
      expect(Number(orgWide.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await poll(org.key, a1.body.job_id, x)).status).toBe(429);
      // another organization's budget is its own
      expect((await submit(other.key, { website_id: otherSite, request_id: `own-${randomUUID()}`, draft })).status).toBe(202);
    } finally {
      seo.organizationPerMinute = 1000;
      seo.websitePerMinute = 1000;
    }
  });

  it('given the outstanding cap per website, then a submission past it is 429 with Retry-After and nothing written; a job that ends gives its place back', async () => {
    const org = await s.org('Outstanding Org');
    const site = (await call(s, 'POST', '/api/v1/websites', { key: org.key, body: { name: 'out', url: 'https://out.example.com' } })).body.website.id;
    held.gate = gate();
    seo.outstandingPerWebsite = 2;
    try {
      const first = (await submit(org.key, { website_id: site, request_id: 'o1', draft })).body.job_id;
      expect((await submit(org.key, { website_id: site, request_id: 'o2', draft })).status).toBe(202);
      // both held running: nothing more is appended for them until the gate opens
      await until('both run', async () => {
        await caughtUp(s, ['seo']);
        return (await s.rt.database.db('rm_seo_jobs').where({ website_id: site, status: 'running' }).count('* as n'))[0].n === '2' || undefined;
      });
      const before = await s.head();
      const past = await submit(org.key, { website_id: site, request_id: 'o3', draft });
      expect(past.status).toBe(429);
      expect(Number(past.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await s.head()).toBe(before);
      // a repeat of an admitted request is its job, not a new place
      expect((await submit(org.key, { website_id: site, request_id: 'o1', draft })).body.job_id).toBe(first);
      held.gate.open();
      expect((await finished(org.key, first, site)).status).toBe('succeeded');
      // a repeat answers the job as it stands
      expect((await submit(org.key, { website_id: site, request_id: 'o1', draft })).body).toEqual({ job_id: first, status: 'succeeded' });
      await until(
        'the places are given back',
        async () => (await submit(org.key, { website_id: site, request_id: 'o3', draft })).status === 202 || undefined,
      );
    } finally {
      held.gate.open();
      held.gate = null;
      seo.outstandingPerWebsite = undefined;
    }
  });

  it('given more jobs than the running caps over NATS, then at most 4 run per website and 16 in all, the rest wait queued, and all end', async () => {
    const org = await s.org('Caps Org');
    const sites: string[] = [];
    for (let i = 0; i < 5; i++)
      sites.push(
        (await call(s, 'POST', '/api/v1/websites', { key: org.key, body: { name: `c${i}`, url: `https://c${i}.example.com` } })).body.website.id,
      );
    held.gate = gate();
    const jobs: { id: string; site: string }[] = [];
    try {
      const plan = [...Array.from({ length: 7 }, () => sites[0]), ...sites.slice(1).flatMap((site) => Array.from({ length: 4 }, () => site))];
      for (const [i, site] of plan.entries()) {
        const r = await submit(org.key, { website_id: site, request_id: `cap-${i}`, draft });
        expect(r.status).toBe(202);
        jobs.push({ id: r.body.job_id, site });
      }
      const counts = async () => {
        await caughtUp(s, ['seo']);
        const rows = await s.rt.database.db('rm_seo_jobs').where('organization_id', org.organization_id).select('website_id', 'status');
        return rows;
      };
      await until(
        'the caps fill',
        async () => {
          const c = await counts();
          if (process.env.SEO_DEBUG) console.log(c.map((r) => r.status).join(','));
          return c.filter((r) => r.status === 'running').length === 16 || undefined;
        },
        20_000,
        200,
      );
      await new Promise((r) => setTimeout(r, 300));
      const rows = await counts();
      const running = rows.filter((r) => r.status === 'running');
      expect(running).toHaveLength(16);
      expect(running.filter((r) => r.website_id === sites[0])).toHaveLength(4);
      expect(rows.filter((r) => r.status === 'queued')).toHaveLength(7);
    } finally {
      held.gate.open();
    }
    for (const j of jobs) expect((await finished(org.key, j.id, j.site)).status).toBe('succeeded');
    held.gate = null;
  });
});

// Two instances over one database: needs a real Postgres server.
const twoInstances = onRealPostgres ? describe : describe.skip;
twoInstances('SEO recommendations on two instances (the default entitlement check)', () => {
  let one: TestServer;
  let two: TestServer;
  const budgets: SeoOptions = { organizationPerMinute: 4, websitePerMinute: 1000 };
  // a NATS of their own: the durable job consumers are named per kind, and another database's workers would take these jobs
  useTwoInstancesOverNats(
    () => ({ app: { seo: budgets } }),
    (ctx) => ({ a: one, b: two } = ctx),
  );

  it("given one organization budget, then requests on both instances spend it together; the organization's features decide the entitlement", async () => {
    const org = await one.org('Two Org');
    const site = (await call(one, 'POST', '/api/v1/websites', { key: org.key, body: { name: 'two', url: 'https://two.example.com' } })).body.website
      .id;
    const waitEdge = 60_000 - (Date.now() % 60_000);
    if (waitEdge < 8000) await new Promise((r) => setTimeout(r, waitEdge + 100));
    const on = (s: TestServer, id: string) =>
      call<any>(s, 'POST', '/api/v1/seo/recommendations', { key: org.key, body: { website_id: site, request_id: id, draft } });
    expect((await on(one, 't1')).status).toBe(202);
    expect((await on(two, 't2')).status).toBe(202);
    const job = (await on(one, 't3')).body.job_id;
    expect((await call(two, 'GET', `/api/v1/seo/recommendations/${job}`, { key: org.key, query: { website_id: site } })).status).toBe(200);
    const past = await on(two, 't4');
    expect(past.status).toBe(429);
    expect(Number(past.headers.get('retry-after'))).toBeGreaterThan(0);

    const off = await one.org('Two Off', { features: ['shopping'] });
    const offSite = (await call(one, 'POST', '/api/v1/websites', { key: off.key, body: { name: 'off', url: 'https://twooff.example.com' } })).body
      .website.id;
    const refused = await call<any>(two, 'POST', '/api/v1/seo/recommendations', {
      key: off.key,
      body: { website_id: offSite, request_id: 'x', draft },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe(SEO_NOT_ENABLED);
  });
});
