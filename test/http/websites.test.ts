import { describe, expect, it } from 'vitest';
import { call, type TestServer, sharedServer } from '../support/server';
import { tenancyChecks, useWorld, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

describe('websites', () => {
  it('given a global partner key, when a website is created, then it is listed with its normalized url and external_id', async () => {
    const r = await call(s, 'POST', '/api/v1/websites', {
      key: w.a.key,
      body: { name: 'Shop', url: 'https://www.Shop.example.com/?utm_source=x', external_id: 'p-1' },
    });
    expect(r.status).toBe(201);
    expect(r.body.website).toMatchObject({ name: 'Shop', normalized_url: 'shop.example.com/', status: 'active', external_id: 'p-1' });
    const list = await call(s, 'GET', '/api/v1/websites', { key: w.a.key });
    expect(list.status).toBe(200);
    expect(list.body.websites.map((x: { id: string }) => x.id)).toContain(r.body.website.id);
  });

  it('given create then list 50 times in a row, then the list always holds the new website', async () => {
    for (let i = 0; i < 50; i++) {
      const r = await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: `Site ${i}`, url: `https://site${i}.example.org` } });
      expect(r.status).toBe(201);
      const list = await call(s, 'GET', '/api/v1/websites', { key: w.a.key });
      expect(list.body.websites.some((x: { id: string }) => x.id === r.body.website.id)).toBe(true);
    }
  });

  it('given a non-partner key, then external_id never appears in answers', async () => {
    const list = await call(s, 'GET', '/api/v1/websites', { key: w.a.plainGlobal });
    expect(list.status).toBe(200);
    for (const site of list.body.websites) expect(site).not.toHaveProperty('external_id');
  });

  it('given a scoped key, then it lists only its websites and cannot create one', async () => {
    const list = await call(s, 'GET', '/api/v1/websites', { key: w.a.scoped });
    expect(list.body.websites.map((x: { id: string }) => x.id)).toEqual([w.a.a2]);
    const before = await s.head();
    const r = await call(s, 'POST', '/api/v1/websites', { key: w.a.scoped, body: { name: 'X', url: 'https://x.example.com' } });
    expect(r).toMatchObject({ status: 403, body: { error: 'Forbidden: global API key required' } });
    expect(await s.head()).toBe(before);
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const before = await s.head();
    const cases: [unknown, string][] = [
      [{ url: 'https://a.example.com' }, 'name is required'],
      [{ name: 'A' }, 'url is required'],
      [{ name: 'A', url: 'not a url' }, 'url: must be an http(s) URL or a domain'],
      [{ name: 7, url: 'https://a.example.com' }, 'name: must be a string'],
      [{ name: 'x'.repeat(201), url: 'https://a.example.com' }, 'name: must be at most 200 characters'],
      [{ name: 'A', url: 'https://a.example.com', extra: 1 }, 'extra is not allowed'],
      [[1, 2], 'body must be a JSON object'],
    ];
    for (const [body, error] of cases) {
      const r = await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error).toBe(error);
    }
    const bad = await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(bad).toMatchObject({ status: 400, body: { error: 'body must be valid JSON' } });
    expect(await s.head()).toBe(before);
  });

  tenancyChecks('GET /api/v1/websites', () => w, { method: 'GET', request: () => ({ path: '/api/v1/websites' }) });
  tenancyChecks('POST /api/v1/websites', () => w, {
    method: 'POST',
    globalOnly: true,
    request: () => ({ path: '/api/v1/websites', body: { name: 'N', url: 'https://n.example.com' } }),
  });
  tenancyChecks('PATCH /api/v1/websites/{id}', () => w, {
    method: 'PATCH',
    websiteScoped: true,
    request: (id) => ({ path: `/api/v1/websites/${id}`, body: { status: 'paused' } }),
  });
  tenancyChecks('DELETE /api/v1/websites/{id}', () => w, {
    method: 'DELETE',
    websiteScoped: true,
    request: (id) => ({ path: `/api/v1/websites/${id}` }),
  });
});

describe('external ids', () => {
  it('given a partner global key, when external_id is set, replaced and cleared, then lookups follow', async () => {
    const site = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Ext', url: 'https://ext.example.com' } })).body.website.id;
    expect((await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { external_id: 'ext-1' } })).body.website.external_id).toBe(
      'ext-1',
    );
    expect((await call(s, 'GET', '/api/v1/websites/by-external-id/ext-1', { key: w.a.key })).body.website.id).toBe(site);
    await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { external_id: 'ext-2' } });
    expect((await call(s, 'GET', '/api/v1/websites/by-external-id/ext-1', { key: w.a.key })).status).toBe(404);
    expect((await call(s, 'GET', '/api/v1/websites/by-external-id/ext-2', { key: w.a.key })).body.website.id).toBe(site);
    const cleared = await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { external_id: null } });
    expect(cleared.body.website.external_id).toBeNull();
    expect((await call(s, 'GET', '/api/v1/websites/by-external-id/ext-2', { key: w.a.key })).status).toBe(404);
  });

  it('given an external_id held by another website, then 409 with existing and nothing written', async () => {
    const one = (
      await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'One', url: 'https://one.example.com', external_id: 'dup' } })
    ).body.website.id;
    const two = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Two', url: 'https://two.example.com' } })).body.website.id;
    const before = await s.head();
    const r = await call(s, 'PATCH', `/api/v1/websites/${two}`, { key: w.a.key, body: { external_id: 'dup' } });
    expect(r.status).toBe(409);
    expect(r.body.existing.website_id).toBe(one);
    expect(typeof r.body.error).toBe('string');
    expect(await s.head()).toBe(before);
    const create = await call(s, 'POST', '/api/v1/websites', {
      key: w.a.key,
      body: { name: 'Three', url: 'https://three.example.com', external_id: 'dup' },
    });
    expect(create.status).toBe(409);
  });

  it('given a deleted website, then its external_id can still be changed, but everything else answers 403', async () => {
    const site = (
      await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Gone', url: 'https://gone.example.com', external_id: 'gone' } })
    ).body.website.id;
    expect((await call(s, 'DELETE', `/api/v1/websites/${site}`, { key: w.a.key })).status).toBe(200);
    expect((await call(s, 'GET', '/api/v1/websites', { key: w.a.key })).body.websites.some((x: { id: string }) => x.id === site)).toBe(false);
    const r = await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { external_id: null } });
    expect(r.status).toBe(200);
    expect(r.body.website.external_id).toBeNull();
    const pause = await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'active' } });
    expect(pause).toMatchObject({ status: 403, body: { error: 'Unauthorized access to this website' } });
  });

  it('given a non-partner or scoped key, then external_id changes are refused', async () => {
    const r1 = await call(s, 'PATCH', `/api/v1/websites/${w.a.a2}`, { key: w.a.plainGlobal, body: { external_id: 'x' } });
    expect(r1).toMatchObject({ status: 403, body: { error: 'Forbidden: partner API key required' } });
    const r2 = await call(s, 'PATCH', `/api/v1/websites/${w.a.a2}`, { key: w.a.scoped, body: { external_id: 'x' } });
    expect(r2).toMatchObject({ status: 403, body: { error: 'Forbidden: global API key required' } });
  });
});

describe('pause and resume', () => {
  it('given a paused website, then it answers 403 like a deleted one until resumed', async () => {
    const site = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Paused', url: 'https://paused.example.com' } })).body
      .website.id;
    expect((await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } })).body.website.status).toBe('paused');
    const del = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site } });
    expect(del.status).toBe(200); // the audit trail stays readable
    const resumed = await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'active' } });
    expect(resumed.body.website.status).toBe('active');
  });
});

describe('provision', () => {
  it('given competitors at or below the site URL, then they are ignored and the rest is created', async () => {
    const r = await call(s, 'POST', '/api/v1/websites/provision', {
      key: w.a.key,
      body: {
        name: 'Prov',
        url: 'https://prov.example.com/shop',
        competitors: [
          { name: 'Self', url: 'https://prov.example.com/shop' },
          { name: 'Below', url: 'https://www.prov.example.com/shop/deals' },
          { name: 'Rival', url: 'https://rival.example.net', identifiers: ['RivalCo'] },
        ],
        topics: [{ name: 'Pricing', prompts: [{ text: 'best cheap widgets' }, { text: 'is prov good', type: 'branded' }] }],
      },
    });
    expect(r.status).toBe(201);
    expect(r.body.competitors.map((c: { name: string }) => c.name)).toEqual(['Rival']);
    expect(r.body.ignored_competitors.map((c: { name: string }) => c.name)).toEqual(['Self', 'Below']);
    expect(r.body.topics[0].prompts).toHaveLength(2);
    expect(r.body.website.normalized_url).toBe('prov.example.com/shop');
  });

  it('given an invalid prompt deep in the body, then 400 names its path and nothing is written', async () => {
    const before = await s.head();
    const r = await call(s, 'POST', '/api/v1/websites/provision', {
      key: w.a.key,
      body: { name: 'P', url: 'https://p.example.com', topics: [{ name: 'T', prompts: [{ text: 'ok' }, { text: '' }] }] },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('topics[0].prompts[1].text: must not be empty');
    expect(await s.head()).toBe(before);
  });
});

describe('API keys', () => {
  it('given a key, when it is revoked, then the next request with it is 401 (even after a cached lookup)', async () => {
    const k = (await call(s, 'POST', '/api/v1/api-keys', { key: w.a.key, body: { name: 'short-lived' } })).body;
    expect(k.key).toMatch(/^aivis_[0-9A-Za-z]{40}$/);
    expect((await call(s, 'GET', '/api/v1/websites', { key: k.key })).status).toBe(200);
    expect((await call(s, 'GET', '/api/v1/websites', { key: k.key })).status).toBe(200);
    expect((await call(s, 'DELETE', `/api/v1/api-keys/${k.id}`, { key: w.a.key })).status).toBe(200);
    expect(await call(s, 'GET', '/api/v1/websites', { key: k.key })).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
  });

  it('given the key listing, then no secret or hash is shown', async () => {
    const r = await call(s, 'GET', '/api/v1/api-keys', { key: w.a.key });
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(w.a.key);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    expect(r.body.data.length).toBeGreaterThanOrEqual(4);
  });

  it('given keys are stored, then the database holds only hashes', async () => {
    const rows = await s.rt.database.db('rm_api_keys').select('key_hash');
    for (const row of rows) expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    const events = await s.rt.database.db('aivis_events').where('type', 'ApiKeyCreated').select('data');
    expect(JSON.stringify(events)).not.toContain(w.a.key);
  });

  it("given another organization's website in website_ids, then 400 and no key", async () => {
    const r = await call(s, 'POST', '/api/v1/api-keys', { key: w.a.key, body: { name: 'bad', website_ids: [w.b.b1] } });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('website_ids');
  });

  tenancyChecks('POST /api/v1/api-keys', () => w, {
    method: 'POST',
    globalOnly: true,
    request: () => ({ path: '/api/v1/api-keys', body: { name: 'k' } }),
  });
});

describe('HTTP rules', () => {
  it('given a GET with a body, then 405', async () => {
    const r = await call(s, 'GET', '/api/v1/websites', { key: w.a.key, body: { a: 1 } }).catch(() => null);
    // fetch refuses GET bodies; send one the raw way
    const { request } = await import('node:http');
    const res = await new Promise<{ status: number; body: string }>((resolve) => {
      const req = request(
        `${s.url}/api/v1/websites`,
        { method: 'GET', headers: { 'x-api-key': w.a.key, 'content-type': 'application/json', 'content-length': '7' } },
        (rs) => {
          let b = '';
          rs.on('data', (c) => (b += c));
          rs.on('end', () => resolve({ status: rs.statusCode!, body: b }));
        },
      );
      req.end('{"a":1}');
    });
    expect(r === null || r.status === 405).toBe(true);
    expect(res.status).toBe(405);
    expect(JSON.parse(res.body).error).toMatch(/body/);
  });

  it('given an unknown route, then 404 with an error body', async () => {
    expect(await call(s, 'GET', '/api/v1/nope', { key: w.a.key })).toMatchObject({ status: 404, body: { error: 'Not found' } });
  });

  it('given only an Authorization header on /api/v1, then 401 (x-api-key only there)', async () => {
    const r = await call(s, 'GET', '/api/v1/websites', { headers: { authorization: `Bearer ${w.a.key}` } });
    expect(r.status).toBe(401);
  });

  it('given any /api/v1 answer, then it carries the rate-limit headers', async () => {
    const r = await call(s, 'GET', '/api/v1/websites', { key: w.a.key });
    expect(Number(r.headers.get('x-rate-limit-limit'))).toBe(600);
    expect(Number(r.headers.get('x-rate-limit-remaining'))).toBeLessThan(600);
    expect(Number(r.headers.get('x-rate-limit-reset'))).toBeGreaterThan(Date.now() / 1000);
  });

  it('given the OpenAPI document, then it reports version 1.0.0 and tags extensions', async () => {
    const r = await call(s, 'GET', '/api/v1/openapi.json', { key: w.a.key });
    expect(r.status).toBe(200);
    expect(r.body.info.version).toBe('1.0.0');
    expect(r.body.paths['/api/v1/websites'].post.requestBody).toBeDefined();
    expect(r.body.paths['/api/v1/api-keys'].post.tags).toContain('extension');
    expect(r.body.paths['/api/v1/websites'].get.tags).not.toContain('extension');
  });
});

describe('users', () => {
  it('given the owner, then their websites are the organization’s; to another organization an empty list; an unknown user is 404', async () => {
    const r = await call(s, 'GET', `/api/v1/users/${w.a.owner_user_id}/websites`, { key: w.a.key });
    expect(r.status).toBe(200);
    expect(r.body.websites.map((x: { website_id: string }) => x.website_id)).toEqual(expect.arrayContaining([w.a.a1, w.a.a2]));
    expect(r.body.websites[0]).toMatchObject({ access_type: 'organization', role: 'owner' });
    const other = await call(s, 'GET', `/api/v1/users/${w.a.owner_user_id}/websites`, { key: w.b.key });
    expect(other).toMatchObject({ status: 200, body: { websites: [] } });
    const unknown = await call(s, 'GET', '/api/v1/users/6f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f/websites', { key: w.b.key });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'User not found' } });
  });
});

describe('bodies', () => {
  it('given a DELETE with a JSON content type and an empty body, then it is treated as no body', async () => {
    const site = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Del', url: 'https://del.example.com' } })).body.website.id;
    const r = await call(s, 'DELETE', `/api/v1/websites/${site}`, {
      key: w.a.key,
      headers: { 'content-type': 'application/json', 'content-length': '0' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  it('given many concurrent writes to one organization, then every one lands (conflicts are retried)', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: `Burst ${i}`, url: `https://burst${i}.example.com` } }),
      ),
    );
    expect(
      results.map((r) => r.status),
      JSON.stringify(results.map((r) => r.body)),
    ).toEqual(Array(12).fill(201));
    const names = (await call(s, 'GET', '/api/v1/websites', { key: w.a.key })).body.websites.map((x: { name: string }) => x.name);
    for (let i = 0; i < 12; i++) expect(names).toContain(`Burst ${i}`);
  });
});
