import { describe, expect, it } from 'vitest';
import { markPromptAnswered } from '../../commands/catalog/mark-prompt-answered';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { isDomainError } from '../../src/domain/errors';
import { MODELS } from '../../src/domain/models';
import { badNames, newSite, postCreated, refusedWithoutWrite } from '../support/http';
import { call, caughtUp, type TestServer, sharedServer } from '../support/server';
import { collectionTenancyChecks, tenancyChecks, UNKNOWN_ID, useWorld, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const post = (path: string, body: unknown, key = w.a.key) => call(s, 'POST', path, { key, body });
const get = (path: string, website_id: string, key = w.a.key) => call(s, 'GET', path, { key, query: { website_id } });

/** The feed of a website once it has every change so far (writes do not wait for the activity read model). */
async function activityOf(websiteId: string) {
  await caughtUp(s, ['activity']);
  const r = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: websiteId, order: 'asc', page_size: 100 } });
  expect(r.status).toBe(200);
  return r.body.data as {
    entity_type: string;
    change_type: string;
    entity_ids: string[] | null;
    via_api_key: boolean;
    actor: { user: { id: string } | null };
  }[];
}

describe('competitors', () => {
  it('given competitors added, renamed, re-identified and removed, then the listing follows with the spec fields', async () => {
    const site = await newSite(s, w.a.key, 'Acme', 'https://acme-shop.example.com/store');
    const a = await post('/api/v1/competitors', {
      website_id: site,
      name: 'Rival',
      url: 'https://www.Rival.example.net/?utm_source=x',
      identifiers: ['RivalCo', 'RivalCo'],
    });
    expect(a.status).toBe(201);
    expect(a.body.competitor).toEqual({
      id: expect.any(String),
      name: 'Rival',
      url: 'https://www.Rival.example.net/?utm_source=x',
      normalized_url: 'rival.example.net/',
      identifiers: ['RivalCo'],
    });
    const b = await post('/api/v1/competitors', { website_id: site, name: 'Other', url: 'other.example.org' });
    expect(b.body.competitor.identifiers).toEqual([]);
    const id = a.body.competitor.id;

    const renamed = await call(s, 'PATCH', `/api/v1/competitors/${id}`, {
      key: w.a.key,
      body: { website_id: site, name: 'Rival Inc', identifiers: ['Rival', 'RVL'] },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.competitor).toMatchObject({ id, name: 'Rival Inc', identifiers: ['Rival', 'RVL'] });

    let list = await get('/api/v1/competitors', site);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ competitors: [renamed.body.competitor, b.body.competitor] });

    const del = await call(s, 'DELETE', `/api/v1/competitors/${id}`, { key: w.a.key, query: { website_id: site } });
    expect(del).toMatchObject({ status: 200, body: { success: true } });
    list = await get('/api/v1/competitors', site);
    expect(list.body.competitors.map((c: { id: string }) => c.id)).toEqual([b.body.competitor.id]);

    const feed = await activityOf(site);
    const mine = feed.filter((e) => e.entity_type === 'competitor');
    expect(mine.map((e) => e.change_type)).toEqual(['created', 'created', 'updated', 'updated', 'deleted']);
    expect(mine[4].entity_ids).toEqual([id]);
    // made with an API key: via_api_key, and no person shown (spec: null for API-key changes)
    expect(mine.every((e) => e.via_api_key && e.actor.user === null)).toBe(true);
  });

  it("given a competitor URL at or below the website's own URL, then 400 and nothing written", async () => {
    const site = await newSite(s, w.a.key, 'Below', 'https://below.example.com/shop');
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 'Self', url: 'https://www.below.example.com/shop' },
        status: 400,
        error: "url: a competitor must not be the website's own URL or a page below it",
      },
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 'Deeper', url: 'below.example.com/shop/deals?x=1' },
        status: 400,
      },
    ]);
    expect((await post('/api/v1/competitors', { website_id: site, name: 'Sibling', url: 'https://below.example.com/shopping' })).status).toBe(201);
  });

  it('given a competitor with the same normalized URL, then 409 with the existing one', async () => {
    const site = await newSite(s, w.a.key);
    const a = await post('/api/v1/competitors', { website_id: site, name: 'Dup', url: 'https://dup.example.net' });
    const before = await s.head();
    const r = await post('/api/v1/competitors', { website_id: site, name: 'Dup again', url: 'http://www.dup.example.net/' });
    expect(r.status).toBe(409);
    expect(r.body.existing.id).toBe(a.body.competitor.id);
    expect(await s.head()).toBe(before);
  });

  it('given bad input, then 4xx naming the field and nothing written', async () => {
    const site = await newSite(s, w.a.key);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/competitors', status: 400, error: 'website_id is required' },
      { method: 'GET', path: '/api/v1/competitors', query: { website_id: 'nope' }, status: 400, error: 'website_id: must be a UUID' },
      { method: 'GET', path: '/api/v1/competitors', query: { website_id: UNKNOWN_ID }, status: 404, error: 'Website not found' },
      { method: 'POST', path: '/api/v1/competitors', body: { name: 'X', url: 'x.example.com' }, status: 400, error: 'website_id is required' },
      ...badNames('/api/v1/competitors', { website_id: site, url: 'x.example.com' }),
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 7, url: 'x.example.com' },
        status: 400,
        error: 'name: must be a string',
      },
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 'X', url: 'not a url' },
        status: 400,
        error: 'url: must be an http(s) URL or a domain',
      },
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 'X', url: 'x.example.com', identifiers: 'X' },
        status: 400,
        error: 'identifiers: must be an array of strings',
      },
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 'X', url: 'x.example.com', identifiers: ['y'.repeat(201)] },
        status: 400,
        error: 'identifiers[0]: must be at most 200 characters',
      },
      {
        method: 'POST',
        path: '/api/v1/competitors',
        body: { website_id: site, name: 'X', url: 'x.example.com', extra: 1 },
        status: 400,
        error: 'extra is not allowed',
      },
      { method: 'POST', path: '/api/v1/competitors', body: { website_id: UNKNOWN_ID, name: 'X', url: 'x.example.com' }, status: 404 },
      {
        method: 'PATCH',
        path: `/api/v1/competitors/${UNKNOWN_ID}`,
        body: { website_id: site, name: 'Y' },
        status: 404,
        error: 'Competitor not found',
      },
      {
        method: 'PATCH',
        path: `/api/v1/competitors/${UNKNOWN_ID}`,
        body: { website_id: site },
        status: 400,
        error: 'body: name or identifiers is required',
      },
      {
        method: 'PATCH',
        path: '/api/v1/competitors/nope',
        body: { website_id: site, name: 'Y' },
        status: 400,
        error: 'competitor_id: must be a UUID',
      },
      { method: 'DELETE', path: `/api/v1/competitors/${UNKNOWN_ID}`, query: { website_id: site }, status: 404, error: 'Competitor not found' },
      { method: 'DELETE', path: `/api/v1/competitors/${UNKNOWN_ID}`, status: 400, error: 'website_id is required' },
    ]);
  });

  it("given another website's competitor id, then 404 on that website", async () => {
    const one = await newSite(s, w.a.key);
    const two = await newSite(s, w.a.key);
    const c = (await post('/api/v1/competitors', { website_id: one, name: 'Mine', url: 'mine.example.net' })).body.competitor;
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'PATCH', path: `/api/v1/competitors/${c.id}`, body: { website_id: two, name: 'Stolen' }, status: 404, error: 'Competitor not found' },
      { method: 'DELETE', path: `/api/v1/competitors/${c.id}`, query: { website_id: two }, status: 404, error: 'Competitor not found' },
    ]);
  });

  collectionTenancyChecks('/api/v1/competitors', () => w, {
    create: { name: 'T', url: 'https://t.example.org' },
    patch: { name: 'T' },
    remove: true,
  });
});

describe('topics', () => {
  it('given a topic deleted with default delete_prompts, then its prompts stay listed; re-creating it restores the topic', async () => {
    const site = await newSite(s, w.a.key);
    const t = await post('/api/v1/topics', { website_id: site, name: 'Pricing' });
    expect(t.status).toBe(201);
    expect(t.body).toEqual({ topic: { id: expect.any(String), name: 'Pricing' }, restored: false });
    const topicId = t.body.topic.id;
    const p = await post('/api/v1/prompts', { website_id: site, text: 'cheapest widgets', topic_id: topicId });
    expect(p.status).toBe(201);

    const del = await call(s, 'DELETE', `/api/v1/topics/${topicId}`, { key: w.a.key, query: { website_id: site } });
    expect(del).toMatchObject({ status: 200, body: { success: true, name: 'Pricing', deleted_prompt_count: 0 } });
    expect((await get('/api/v1/topics', site)).body.data).toEqual([]);
    expect((await get('/api/v1/prompts', site)).body.data.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
      [p.body.prompt.id, 'active'],
    ]);

    const again = await call(s, 'DELETE', `/api/v1/topics/${topicId}`, { key: w.a.key, query: { website_id: site } });
    expect(again).toMatchObject({ status: 404, body: { error: 'Topic not found' } });

    const back = await post('/api/v1/topics', { website_id: site, name: 'PRICING' });
    expect(back.status).toBe(201);
    expect(back.body).toEqual({ topic: { id: topicId, name: 'Pricing' }, restored: true });
    expect((await get('/api/v1/topics', site)).body.data).toEqual([{ id: topicId, name: 'Pricing', prompt_count: 1 }]);
  });

  it('given delete_prompts=true, then every prompt in it is soft-deleted and re-creating the topic brings them back', async () => {
    const site = await newSite(s, w.a.key);
    const topicId = (await post('/api/v1/topics', { website_id: site, name: 'Support' })).body.topic.id;
    const other = (await post('/api/v1/topics', { website_id: site, name: 'Other' })).body.topic.id;
    const p1 = (await post('/api/v1/prompts', { website_id: site, text: 'one', topic_id: topicId })).body.prompt;
    const p2 = (await post('/api/v1/prompts', { website_id: site, text: 'two', topic_id: topicId, status: 'paused' })).body.prompt;
    const p3 = (await post('/api/v1/prompts', { website_id: site, text: 'three', topic_id: other })).body.prompt;
    const gone = (await post('/api/v1/prompts', { website_id: site, text: 'gone', topic_id: topicId })).body.prompt;
    expect((await call(s, 'DELETE', `/api/v1/prompts/${gone.id}`, { key: w.a.key, query: { website_id: site } })).body).toEqual({
      success: true,
      soft_deleted: false,
    });

    const del = await call(s, 'DELETE', `/api/v1/topics/${topicId}`, { key: w.a.key, query: { website_id: site, delete_prompts: 'true' } });
    expect(del.body).toEqual({ success: true, name: 'Support', deleted_prompt_count: 2 });
    expect((await get('/api/v1/prompts', site)).body.data.map((x: { id: string }) => x.id)).toEqual([p3.id]);
    // a soft-deleted prompt is gone for the API
    const r = await call(s, 'DELETE', `/api/v1/prompts/${p1.id}`, { key: w.a.key, query: { website_id: site } });
    expect(r).toMatchObject({ status: 404, body: { error: 'Prompt not found' } });

    const back = await post('/api/v1/topics', { website_id: site, name: ' support ' });
    expect(back.body).toEqual({ topic: { id: topicId, name: 'Support' }, restored: true });
    const prompts = (await get('/api/v1/prompts', site)).body.data;
    expect(prompts.map((x: { id: string; status: string; topic_id: string }) => [x.id, x.status, x.topic_id])).toEqual([
      [p1.id, 'active', topicId],
      [p2.id, 'paused', topicId],
      [p3.id, 'active', other],
    ]);

    const feed = (await activityOf(site)).filter((e) => e.entity_type === 'topic');
    expect(feed.map((e) => e.change_type)).toEqual(['created', 'created', 'deleted', 'restored']);
    expect(feed[2].entity_ids).toEqual([topicId, p1.id, p2.id]);
    expect(feed[3].entity_ids).toEqual([topicId, p1.id, p2.id]);
  });

  it('given a live topic of that name, then 409 with the existing topic', async () => {
    const site = await newSite(s, w.a.key);
    const t = (await post('/api/v1/topics', { website_id: site, name: 'Dup' })).body.topic;
    const before = await s.head();
    const r = await post('/api/v1/topics', { website_id: site, name: 'dup' });
    expect(r.status).toBe(409);
    expect(r.body.existing).toEqual(t);
    expect(await s.head()).toBe(before);
  });

  it("given another website's topic, an unknown one, a bad delete_prompts or a body, then 4xx and nothing written", async () => {
    const one = await newSite(s, w.a.key);
    const two = await newSite(s, w.a.key);
    const t = (await post('/api/v1/topics', { website_id: one, name: 'Mine' })).body.topic;
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'DELETE', path: `/api/v1/topics/${t.id}`, query: { website_id: two }, status: 404, error: 'Topic not found' },
      { method: 'DELETE', path: `/api/v1/topics/${UNKNOWN_ID}`, query: { website_id: one }, status: 404, error: 'Topic not found' },
      {
        method: 'DELETE',
        path: `/api/v1/topics/${t.id}`,
        query: { website_id: one, delete_prompts: 'yes' },
        status: 400,
        error: "delete_prompts: must be 'true' or 'false'",
      },
      { method: 'DELETE', path: `/api/v1/topics/${t.id}`, query: { website_id: one, delete_prompts: '1' }, status: 400 },
      {
        method: 'DELETE',
        path: `/api/v1/topics/${t.id}`,
        query: { website_id: one },
        body: { delete_prompts: true },
        status: 400,
        error: 'this endpoint takes no request body',
      },
      { method: 'DELETE', path: `/api/v1/topics/${t.id}`, status: 400, error: 'website_id is required' },
      { method: 'DELETE', path: '/api/v1/topics/nope', query: { website_id: one }, status: 400, error: 'topic_id: must be a UUID' },
      ...badNames('/api/v1/topics', { website_id: one }),
      { method: 'GET', path: '/api/v1/topics', status: 400, error: 'website_id is required' },
    ]);
  });

  collectionTenancyChecks('/api/v1/topics', () => w, { create: { name: 'T' }, remove: true });
});

describe('prompts', () => {
  it('given prompts created and edited, then the listing has the fields and follows each write at once', async () => {
    const site = await newSite(s, w.a.key);
    const topic = (await post('/api/v1/topics', { website_id: site, name: 'T' })).body.topic.id;
    const c = (
      await postCreated(s, w.a.key, '/api/v1/prompts', { website_id: site, text: 'best widgets 2026', topic_id: topic, tags: ['a', 'b', 'a'] })
    ).prompt;
    expect(c).toEqual({
      id: expect.any(String),
      text: 'best widgets 2026',
      topic_id: topic,
      type: 'non_branded',
      status: 'active',
      tags: ['a', 'b'],
      created_at: expect.any(String),
    });
    const id = c.id;
    const u = await call(s, 'PATCH', `/api/v1/prompts/${id}`, {
      key: w.a.key,
      body: { website_id: site, status: 'paused', type: 'branded', tags: [], topic_id: null, text: 'is acme good' },
    });
    expect(u.status).toBe(200);
    expect(u.body.prompt).toEqual({ ...c, status: 'paused', type: 'branded', tags: [], topic_id: null, text: 'is acme good' });
    const list = await get('/api/v1/prompts', site);
    expect(list.body).toEqual({ data: [u.body.prompt] });
    const same = await call(s, 'PATCH', `/api/v1/prompts/${id}`, { key: w.a.key, body: { website_id: site, status: 'paused' } });
    expect(same.body.prompt).toEqual(u.body.prompt);
    for (let i = 0; i < 10; i++) {
      const p = await post('/api/v1/prompts', { website_id: site, text: `prompt ${i}` });
      const l = await get('/api/v1/prompts', site);
      expect(l.body.data.at(-1).id).toBe(p.body.prompt.id);
    }
    const feed = (await activityOf(site)).filter((e) => e.entity_type === 'prompt');
    expect(feed.slice(0, 2).map((e) => [e.change_type, e.entity_ids])).toEqual([
      ['created', [id]],
      ['updated', [id]],
    ]);
  });

  it('given a prompt without answers, then DELETE hard-deletes it; with answers, it soft-deletes it', async () => {
    const site = await newSite(s, w.a.key);
    const a = (await post('/api/v1/prompts', { website_id: site, text: 'no answers' })).body.prompt;
    const b = (await post('/api/v1/prompts', { website_id: site, text: 'answered' })).body.prompt;
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, actor: SYSTEM_ACTOR };
    const m = await markPromptAnswered(ctx, { website_id: site, prompt_id: b.id });
    expect(isDomainError(m)).toBe(false);

    expect((await call(s, 'DELETE', `/api/v1/prompts/${a.id}`, { key: w.a.key, query: { website_id: site } })).body).toEqual({
      success: true,
      soft_deleted: false,
    });
    expect((await call(s, 'DELETE', `/api/v1/prompts/${b.id}`, { key: w.a.key, query: { website_id: site } })).body).toEqual({
      success: true,
      soft_deleted: true,
    });
    expect((await get('/api/v1/prompts', site)).body.data).toEqual([]);
    const rows = await s.rt.database.db('rm_prompts').where('website_id', site).select('id', 'soft_deleted_at');
    expect(rows.map((r: { id: string }) => r.id)).toEqual([b.id]);
    expect(rows[0].soft_deleted_at).not.toBeNull();

    const feed = (await activityOf(site)).filter((e) => e.entity_type === 'prompt' && e.change_type === 'deleted');
    expect(feed.map((e) => e.entity_ids)).toEqual([[a.id], [b.id]]);
  });

  it('given bad input, unknown ids or another website, then 4xx naming the field and nothing written', async () => {
    const one = await newSite(s, w.a.key);
    const two = await newSite(s, w.a.key);
    const p = (await post('/api/v1/prompts', { website_id: one, text: 'mine' })).body.prompt;
    const gone = (await post('/api/v1/topics', { website_id: one, name: 'Gone' })).body.topic.id;
    await call(s, 'DELETE', `/api/v1/topics/${gone}`, { key: w.a.key, query: { website_id: one } });
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/prompts', status: 400, error: 'website_id is required' },
      { method: 'DELETE', path: `/api/v1/prompts/${p.id}`, query: { website_id: two }, status: 404, error: 'Prompt not found' },
      { method: 'DELETE', path: `/api/v1/prompts/${UNKNOWN_ID}`, query: { website_id: one }, status: 404, error: 'Prompt not found' },
      { method: 'DELETE', path: `/api/v1/prompts/${p.id}`, status: 400, error: 'website_id is required' },
      {
        method: 'DELETE',
        path: `/api/v1/prompts/${p.id}`,
        query: { website_id: one },
        body: {},
        status: 400,
        error: 'this endpoint takes no request body',
      },
      { method: 'PATCH', path: `/api/v1/prompts/${p.id}`, body: { website_id: two, status: 'paused' }, status: 404, error: 'Prompt not found' },
      {
        method: 'PATCH',
        path: `/api/v1/prompts/${p.id}`,
        body: { website_id: one },
        status: 400,
        error: 'body: nothing to change: send text, topic_id, type, status or tags',
      },
      {
        method: 'PATCH',
        path: `/api/v1/prompts/${p.id}`,
        body: { website_id: one, status: 'archived' },
        status: 400,
        error: "status: must be 'active' or 'paused'",
      },
      {
        method: 'PATCH',
        path: `/api/v1/prompts/${p.id}`,
        body: { website_id: one, topic_id: gone },
        status: 400,
        error: 'topic_id: Topic not found',
      },
      { method: 'POST', path: '/api/v1/prompts', body: { website_id: one }, status: 400, error: 'text is required' },
      {
        method: 'POST',
        path: '/api/v1/prompts',
        body: { website_id: one, text: 't'.repeat(2001) },
        status: 400,
        error: 'text: must be at most 2000 characters',
      },
      {
        method: 'POST',
        path: '/api/v1/prompts',
        body: { website_id: one, text: 'x', type: 'other' },
        status: 400,
        error: "type: must be 'branded' or 'non_branded'",
      },
      { method: 'POST', path: '/api/v1/prompts', body: { website_id: one, text: 'x', tags: [1] }, status: 400, error: 'tags[0]: must be a string' },
      {
        method: 'POST',
        path: '/api/v1/prompts',
        body: { website_id: one, text: 'x', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) },
        status: 400,
        error: 'tags: must have at most 50 items',
      },
      {
        method: 'POST',
        path: '/api/v1/prompts',
        body: { website_id: one, text: 'x', topic_id: UNKNOWN_ID },
        status: 400,
        error: 'topic_id: Topic not found',
      },
      {
        method: 'POST',
        path: '/api/v1/prompts',
        body: { website_id: one, text: 'x', topic_id: 'abc' },
        status: 400,
        error: 'topic_id: must be a UUID',
      },
      { method: 'POST', path: '/api/v1/prompts', body: { website_id: 'abc', text: 'x' }, status: 400, error: 'website_id: must be a UUID' },
    ]);
  });

  it('given delete and the first-answer marker racing on the same prompt, then the end state is always consistent', async () => {
    const site = await newSite(s, w.a.key);
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, actor: SYSTEM_ACTOR };
    for (let round = 0; round < 10; round++) {
      const p = (await post('/api/v1/prompts', { website_id: site, text: `race ${round}` })).body.prompt;
      const [del, mark] = await Promise.all([
        call(s, 'DELETE', `/api/v1/prompts/${p.id}`, { key: w.a.key, query: { website_id: site } }),
        markPromptAnswered(ctx, { website_id: site, prompt_id: p.id }),
      ]);
      expect(del.status).toBe(200);
      if (isDomainError(mark)) {
        // the delete won: hard-deleted, and the answer was never recorded
        expect(mark).toEqual({ kind: 'not_found', message: 'Prompt not found' });
        expect(del.body.soft_deleted).toBe(false);
      } else {
        // the marker won: the prompt has history, so it can only be soft-deleted
        expect(del.body.soft_deleted).toBe(true);
      }
    }
  });

  collectionTenancyChecks('/api/v1/prompts', () => w, { create: { text: 'T' }, patch: { status: 'paused' }, remove: true });
});

describe('models', () => {
  it('given the model catalogue, then GET /api/v1/models lists its eleven models with label and shopping', async () => {
    const r = await call(s, 'GET', '/api/v1/models', { key: w.a.key });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ data: MODELS.map((m) => ({ id: m.id, label: m.label, shopping: m.shopping })) });
    expect(r.body.data).toHaveLength(11);
    expect(r.body.data.filter((m: { shopping: boolean }) => m.shopping)).toHaveLength(2);
  });
  tenancyChecks('GET /api/v1/models', () => w, { method: 'GET', request: () => ({ path: '/api/v1/models' }) });
});

describe('paused websites', () => {
  it('given a paused website, then its catalogue endpoints answer 403 and write nothing', async () => {
    const site = await newSite(s, w.a.key);
    await call(s, 'PATCH', `/api/v1/websites/${site}`, { key: w.a.key, body: { status: 'paused' } });
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'GET', path: '/api/v1/prompts', query: { website_id: site }, status: 403, error: 'Unauthorized access to this website' },
      { method: 'POST', path: '/api/v1/topics', body: { website_id: site, name: 'T' }, status: 403, error: 'Unauthorized access to this website' },
    ]);
  });
});
