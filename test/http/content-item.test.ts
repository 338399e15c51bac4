import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSite, refusedWithoutWrite } from '../support/http';
import { call, caughtUp, type TestServer } from '../support/server';
import { tenancyChecks, UNKNOWN_ID, useWorld, type World } from '../support/tenancy';
import { grepDatabase } from '../support/db-grep';
import { sleep } from '../support/events';
import { WRITE_WAITS } from '../../src/runtime';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx));

async function tracked(site: string, url: string, key = w.a.key) {
  const r = await call(s, 'POST', '/api/v1/content/track', { key, body: { website_id: site, urls: [{ url }] } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.created[0].content_id as string;
}

describe('content items: detail, title, physical delete', () => {
  it('given an item, then GET answers it with or without its website_id; another website_id, an unknown id or another organization: 404', async () => {
    const site = await newSite(s, w.a.key);
    const id = await tracked(site, 'detail.example.com/a');
    expect((await call(s, 'GET', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(200);
    expect((await call(s, 'GET', `/api/v1/content/${id}`, { key: w.a.key, query: { website_id: site } })).status).toBe(200);
    for (const [key, query] of [
      [w.a.key, { website_id: w.a.a1 }],
      [w.b.key, undefined],
      [w.b.key, { website_id: w.b.b1 }],
    ] as const) {
      const r = await call(s, 'GET', `/api/v1/content/${id}`, { key, query });
      expect(r).toMatchObject({ status: 404, body: { error: 'Content not found' } });
    }
    expect((await call(s, 'GET', `/api/v1/content/${UNKNOWN_ID}`, { key: w.a.key })).status).toBe(404);
  });

  it('given a key scoped to another website of the organization, or a paused website, then 403', async () => {
    const inA1 = await tracked(w.a.a1, `scope-${randomUUID()}.example.com/x`);
    const r = await call(s, 'GET', `/api/v1/content/${inA1}`, { key: w.a.scoped });
    expect(r).toMatchObject({ status: 403, body: { error: 'Unauthorized access to this website' } });
    const site = await newSite(s, w.a.key);
    const id = await tracked(site, 'paused.example.com/a');
    expect((await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } })).status).toBe(200);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: `/api/v1/content/${id}`, status: 403, error: 'Unauthorized access to this website' },
      { method: 'PATCH', path: `/api/v1/content/${id}`, body: { title: 'x' }, status: 403 },
      { method: 'DELETE', path: `/api/v1/content/${id}`, status: 403 },
      { method: 'POST', path: '/api/v1/content/track', body: { website_id: site, urls: [{ url: 'paused.example.com/b' }] }, status: 403 },
    ]);
  });

  it('given PATCH, then the title changes; any other key is a 400 naming it and nothing changes', async () => {
    const site = await newSite(s, w.a.key);
    const id = await tracked(site, 'patch.example.com/old-title');
    const r = await call(s, 'PATCH', `/api/v1/content/${id}`, { key: w.a.key, body: { website_id: site, title: 'New title' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ content_id: id, title: 'New title', url: 'patch.example.com/old-title' });
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'PATCH', path: `/api/v1/content/${id}`, body: { title: 'x', url: 'other.example.com' }, status: 400, error: /url/ },
      { method: 'PATCH', path: `/api/v1/content/${id}`, body: { body: 'text' }, status: 400, error: /body|title/ },
      { method: 'PATCH', path: `/api/v1/content/${id}`, body: { title: '' }, status: 400, error: /^title/ },
      { method: 'PATCH', path: `/api/v1/content/${id}`, body: { title: 'x', website_id: w.a.a1 }, status: 404, error: 'Content not found' },
    ]);
    expect((await call(s, 'PATCH', `/api/v1/content/${id}`, { key: w.b.key, body: { title: 'x' } })).status).toBe(404);
    expect((await call(s, 'GET', `/api/v1/content/${id}`, { key: w.a.key })).body.title).toBe('New title');
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, entity_type: 'content', order: 'asc' } });
    expect(feed.body.data.map((e: { change_type: string }) => e.change_type)).toEqual(['created', 'updated']);
  });

  it('given an item with a unique marker in its custom values, when deleted and every projection rebuilt, then the marker is nowhere and the URL tracks again under a new id', async () => {
    const site = await newSite(s, w.a.key);
    const tab = (await call(s, 'POST', '/api/v1/content/sheets', { key: w.a.key, body: { website_id: site, name: 'Erasable' } })).body.sheet.sheet_id;
    expect((await call(s, 'POST', `/api/v1/content/sheets/${tab}/columns`, { key: w.a.key, body: { name: 'Notes', type: 'text' } })).status).toBe(
      201,
    );
    const marker = `content-erasure-marker-${randomUUID()}`;
    const r = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: site, sheet_id: tab, urls: [{ url: 'https://erase.example.com/page', fields: [{ column: 'Notes', value: marker }] }] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.created[0].content_id;
    const db = s.rt.database.db;
    // the read model has it; the log only as ciphertext
    expect(await grepDatabase(db, marker)).toEqual(['rm_content.fields']);

    await refusedWithoutWrite(s, w.b.key, [{ method: 'DELETE', path: `/api/v1/content/${id}`, status: 404, error: 'Content not found' }]);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'DELETE', path: `/api/v1/content/${id}`, query: { website_id: w.a.a1 }, status: 404, error: 'Content not found' },
    ]);
    const del = await call(s, 'DELETE', `/api/v1/content/${id}`, { key: w.a.key, query: { website_id: site } });
    expect(del).toMatchObject({ status: 200, body: { success: true } });
    expect((await call(s, 'GET', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(404);
    expect((await call(s, 'DELETE', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(404);

    for (const runner of s.rt.runners.values()) await runner.rebuild();
    expect(await grepDatabase(db, marker)).toEqual([]);
    expect(await db('rm_content').where('content_id', id).first()).toBeUndefined();

    const again = await call(s, 'POST', '/api/v1/content/track', {
      key: w.a.key,
      body: { website_id: site, urls: [{ url: 'erase.example.com/page' }] },
    });
    expect(again.body).toMatchObject({ created_count: 1, skipped_count: 0 });
    expect(again.body.created[0].content_id).not.toBe(id);
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, entity_type: 'content', order: 'asc' } });
    expect(feed.body.data.map((e: { change_type: string }) => e.change_type)).toEqual(['created', 'deleted', 'created']);
  }, 90_000);

  it('given the content read model held back past the usual wait, when an item is deleted, then the answer waits for it and a GET right after is 404', async () => {
    // given
    const site = await newSite(s, w.a.key);
    const id = await tracked(site, `held-${randomUUID()}.example.com/a`);
    const runner = s.rt.runners.get('content')!;
    await runner.stop();
    // the usual wait 1 s here instead of 5 s (the second wait unchanged)
    s.rt.writeWaits.usualMs = 1000;
    let answered = false;
    let del!: Promise<Awaited<ReturnType<typeof call>>>;
    try {
      // when
      del = call(s, 'DELETE', `/api/v1/content/${id}`, { key: w.a.key });
      del.finally(() => (answered = true)).catch(() => undefined);
      await sleep(2_000);
      expect(answered, 'the DELETE answered before the content read model had it').toBe(false);
    } finally {
      s.rt.writeWaits.usualMs = WRITE_WAITS.usualMs;
      await runner.start();
    }
    // then
    expect(await del).toMatchObject({ status: 200, body: { success: true } });
    expect((await call(s, 'GET', `/api/v1/content/${id}`, { key: w.a.key })).status).toBe(404);
  }, 60_000);

  tenancyChecks('GET /api/v1/content/{id}', () => w, {
    method: 'GET',
    request: () => ({ path: `/api/v1/content/${UNKNOWN_ID}` }),
  });
  tenancyChecks('PATCH /api/v1/content/{id}', () => w, {
    method: 'PATCH',
    request: () => ({ path: `/api/v1/content/${UNKNOWN_ID}`, body: { title: 'x' } }),
  });
  tenancyChecks('DELETE /api/v1/content/{id}', () => w, {
    method: 'DELETE',
    request: () => ({ path: `/api/v1/content/${UNKNOWN_ID}` }),
  });
});
