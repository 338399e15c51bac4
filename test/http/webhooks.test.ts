import { Webhook as Verifier } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { apiKey, connect, toolOk, toolRefused } from '../mcp/support';
import { WebhooksView } from '../../queries/webhooks/views';
import { getOk } from '../support/http';
import { type Receiver, startReceiver } from '../support/receiver';
import { call, caughtUp, startServer, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { until } from '../support/until';
import { beforeAll } from 'vitest';

let s: TestServer;
let w: World;
let rx: Receiver;
beforeAll(async () => {
  rx = await startReceiver();
  // a local receiver: private addresses allowed; two quick retries
  // an attempt times out after 3 s, not 10 (the hanging receiver's test waits for it)
  s = await startServer({ WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE_S: '1,1' }, {}, undefined, { webhooks: { timeoutMs: 3000 } });
  w = await buildWorld(s);
});
afterAll(async () => {
  await s?.close();
  await rx?.close();
});

const create = async (body: Record<string, unknown>, key = w.a.key) => {
  const r = await call(s, 'POST', '/api/v1/webhooks', { key, body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { webhook: { id: string; status: string }; secret: string };
};
const topic = async (websiteId: string, name = `T ${Math.random()}`) => {
  const r = await call(s, 'POST', '/api/v1/topics', { key: w.a.key, body: { website_id: websiteId, name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.topic.id as string;
};
interface Delivery {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
}
const deliveries = async (id: string, query: Record<string, string> = {}): Promise<Delivery[]> =>
  (await getOk(s, w.a.key, `/api/v1/webhooks/${id}/deliveries`, query)).deliveries;
/** The receiver answers `status()` at `path` (asked again for each request), other paths as before, until the returned function is called. */
const answering = (path: string, status: () => number) => {
  const prev = rx.answer;
  rx.answer = (p, req, res) => {
    if (p !== path) return prev(p, req, res);
    res.statusCode = status();
    res.end();
  };
  return () => {
    rx.answer = prev;
  };
};
const settledDelivery = (id: string, status: string) =>
  until(`a ${status} delivery of ${id}`, async () => (await deliveries(id)).find((d) => d.status === status), 30_000, 100);

describe('webhook endpoints', () => {
  it('given a created endpoint, then the secret is shown once, and it is listed, read, changed and deleted', async () => {
    const made = await create({ url: `${rx.url}/crud`, event_types: ['topic.created'], description: 'ours' });
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(made.secret.slice(6), 'base64')).toHaveLength(32);
    expect(made.webhook).toMatchObject({
      url: `${rx.url}/crud`,
      event_types: ['topic.created'],
      website_ids: null,
      format: 'standard',
      status: 'enabled',
    });
    const list = await call(s, 'GET', '/api/v1/webhooks', { key: w.a.key });
    expect(list.body.webhooks.map((x: { id: string }) => x.id)).toContain(made.webhook.id);
    expect(JSON.stringify(list.body)).not.toContain(made.secret);
    const patched = await call(s, 'PATCH', `/api/v1/webhooks/${made.webhook.id}`, {
      key: w.a.key,
      body: { status: 'disabled', website_ids: [w.a.a1] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.webhook).toMatchObject({ status: 'disabled', website_ids: [w.a.a1], description: 'ours' });
    expect((await call(s, 'GET', `/api/v1/webhooks/${made.webhook.id}`, { key: w.b.key })).status).toBe(404);
    expect((await call(s, 'DELETE', `/api/v1/webhooks/${made.webhook.id}`, { key: w.a.key })).status).toBe(200);
    expect((await call(s, 'GET', `/api/v1/webhooks/${made.webhook.id}`, { key: w.a.key })).status).toBe(404);
    // the activity feed is projected after the write answers (CI read it before the deletion was in)
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'webhook' } });
    expect(feed.body.data.map((e: { change_type: string }) => e.change_type).sort()).toEqual(['created', 'deleted', 'updated']);
  });

  it('given a scoped key, then every webhook endpoint is 403 global key required and nothing is written', async () => {
    const before = await s.head();
    for (const [m, p] of [
      ['POST', '/api/v1/webhooks'],
      ['GET', '/api/v1/webhooks'],
      ['GET', '/api/v1/webhooks/event-types'],
    ] as const) {
      const r = await call(s, m, p, { key: w.a.scoped, body: m === 'POST' ? { url: `${rx.url}/x`, event_types: ['*'] } : undefined });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('Forbidden: global API key required');
    }
    expect(await s.head()).toBe(before);
  });

  it('given the event types, then they hold the feed words, alert.fired and webhook.test', async () => {
    const r = await call(s, 'GET', '/api/v1/webhooks/event-types', { key: w.a.key });
    expect(r.body.event_types).toEqual(
      expect.arrayContaining(['topic.created', 'topic.deleted', 'content.published', 'alert.fired', 'webhook.test']),
    );
  });
});

describe('delivery', () => {
  it('given an endpoint for topic.created on one website, when a topic is created there and on another, then one signed delivery arrives', async () => {
    const { webhook, secret } = await create({ url: `${rx.url}/topics`, event_types: ['topic.created'], website_ids: [w.a.a1] });
    const mine = await topic(w.a.a1);
    await topic(w.a.a2);
    const got = await until('the delivery', async () => rx.on('/topics')[0]);
    expect(got.headers['content-type']).toContain('application/json');
    expect(() => new Verifier(secret).verify(got.body, got.headers)).not.toThrow();
    expect(got.json).toMatchObject({
      type: 'topic.created',
      organization_id: w.a.organization_id,
      website_id: w.a.a1,
      data: { entity_type: 'topic', change_type: 'created', entity_ids: [mine], website_id: w.a.a1 },
    });
    expect(got.headers['webhook-id']).toBe(got.json.id);
    const done = await settledDelivery(webhook.id, 'succeeded');
    expect(done).toMatchObject({ event_id: got.json.id, event_type: 'topic.created', attempts: 1, last_status_code: 200, last_error: null });
    await new Promise((r) => setTimeout(r, 500));
    expect(rx.on('/topics')).toHaveLength(1);
    expect(await deliveries(webhook.id)).toHaveLength(1);
  });

  it('given a receiver answering 500 twice, then the same webhook-id is retried and delivered on the third attempt', async () => {
    const { webhook } = await create({ url: `${rx.url}/flaky`, event_types: ['topic.created'], website_ids: [w.a.a2] });
    let n = 0;
    const restore = answering('/flaky', () => (++n <= 2 ? 500 : 204));
    await topic(w.a.a2);
    const d = await settledDelivery(webhook.id, 'succeeded');
    expect(d).toMatchObject({ attempts: 3, last_status_code: 204 });
    const ids = new Set(rx.on('/flaky').map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1);
    restore();
  });

  it('given a receiver that always fails, then the delivery is dead after the schedule, and a redelivery tries once more', async () => {
    const { webhook } = await create({ url: `${rx.url}/down`, event_types: ['topic.created'], website_ids: [w.a.a2] });
    const restore = answering('/down', () => 503);
    await topic(w.a.a2);
    const dead = await settledDelivery(webhook.id, 'dead');
    expect(dead).toMatchObject({ attempts: 3, last_status_code: 503, last_error: 'answered 503' });
    restore();
    const r = await call(s, 'POST', `/api/v1/webhooks/${webhook.id}/deliveries/${dead.id}/redeliver`, { key: w.a.key });
    expect(r.status).toBe(202);
    const ok = await settledDelivery(webhook.id, 'succeeded');
    expect(ok).toMatchObject({ id: dead.id, attempts: 4 });
    expect(new Set(rx.on('/down').map((x) => x.headers['webhook-id'])).size).toBe(1);
  });

  it('given a receiver answering 410, then the delivery failed without retry and the endpoint is disabled', async () => {
    const { webhook } = await create({ url: `${rx.url}/gone`, event_types: ['*'], website_ids: [w.a.a2] });
    const restore = answering('/gone', () => 410);
    await topic(w.a.a2);
    const d = await settledDelivery(webhook.id, 'failed');
    expect(d).toMatchObject({ attempts: 1, last_status_code: 410 });
    const after = await until('disabled', async () => {
      const r = await call(s, 'GET', `/api/v1/webhooks/${webhook.id}`, { key: w.a.key });
      return r.body.webhook.status === 'disabled' && r.body.webhook;
    });
    expect(after.disabled_reason).toContain('410');
    restore();
  });

  it('given a receiver that hangs and one that redirects to a private address, then the others are still delivered and the redirect is not followed', async () => {
    const hang = await create({ url: `${rx.url}/hang`, event_types: ['topic.created'], website_ids: [w.a.a2] });
    const redirect = await create({ url: `${rx.url}/redirect`, event_types: ['topic.created'], website_ids: [w.a.a2] });
    const fine = await create({ url: `${rx.url}/fine`, event_types: ['topic.created'], website_ids: [w.a.a2] });
    const prev = rx.answer;
    rx.answer = (path, req, res) => {
      if (path === '/hang') return; // never answers
      if (path === '/redirect') {
        res.statusCode = 307;
        res.setHeader('location', `${rx.url}/fine-target`);
        return void res.end();
      }
      return prev(path, req, res);
    };
    const started = Date.now();
    await topic(w.a.a2);
    await settledDelivery(fine.webhook.id, 'succeeded');
    expect(Date.now() - started).toBeLessThan(5000);
    const r = await until('the redirect attempt', async () => (await deliveries(redirect.webhook.id)).find((d) => d.attempts >= 1 && d.last_error));
    expect(r.last_error).toContain('redirect');
    expect(rx.on('/fine-target')).toHaveLength(0);
    // the hanging receiver's attempt ends at the timeout (3 s here) and is retried
    const h = await until('the hang timed out', async () => (await deliveries(hang.webhook.id)).find((d) => d.last_error), 30_000, 200);
    expect(h.last_error).toMatch(/TIMEOUT/);
    rx.answer = prev;
  }, 60_000);

  it('given a rotated secret, then deliveries carry both signatures, each verifying', async () => {
    const { webhook, secret } = await create({ url: `${rx.url}/rotated`, event_types: ['webhook.test'] });
    const rot = await call(s, 'POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { key: w.a.key });
    expect(rot.status).toBe(200);
    expect(rot.body.secret).not.toBe(secret);
    const t = await call(s, 'POST', `/api/v1/webhooks/${webhook.id}/test`, { key: w.a.key });
    expect(t.status).toBe(202);
    const got = await until('the test event', async () => rx.on('/rotated')[0]);
    expect(got.json).toMatchObject({ type: 'webhook.test', data: { webhook_id: webhook.id } });
    expect(got.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Verifier(secret).verify(got.body, got.headers)).not.toThrow();
    expect(() => new Verifier(rot.body.secret).verify(got.body, got.headers)).not.toThrow();
    const d = await settledDelivery(webhook.id, 'succeeded');
    expect(d.id).toBe(t.body.delivery_id);
  });

  it('given the Slack format, then the body is {text}', async () => {
    const { webhook } = await create({ url: `${rx.url}/slack`, event_types: ['topic.created'], website_ids: [w.a.a1], format: 'slack' });
    await topic(w.a.a1);
    const got = await until('the slack post', async () => rx.on('/slack')[0]);
    expect(Object.keys(got.json)).toEqual(['text']);
    expect(got.json.text).toContain('topic.created');
    await settledDelivery(webhook.id, 'succeeded');
  });
});

describe('MCP list_webhooks', () => {
  it('given a global key, then the endpoints are listed; a scoped key is refused', async () => {
    const client = await connect(s, apiKey(w.a.key));
    const scoped = await connect(s, apiKey(w.a.scoped));
    try {
      const out = WebhooksView.parse(await toolOk(client, 'list_webhooks', {}));
      expect(out.webhooks.length).toBeGreaterThan(0);
      await toolRefused(s, scoped, 'list_webhooks', {}, 403, 'Forbidden: global API key required');
    } finally {
      await client.close();
      await scoped.close();
    }
  });
});
