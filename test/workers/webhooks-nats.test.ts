import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createWebhook, webhookStream } from '../../commands/webhooks/webhook';
import { loadConfig } from '../../src/config';
import { openPostgres } from '../../src/db';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { isDomainError } from '../../src/domain/errors';
import { silentLogger } from '../../src/logger';
import { openRuntime, type Runtime } from '../../src/runtime';
import { listDeliveries } from '../../queries/webhooks/webhooks';
import { startNatsServer } from '../bus/nats-server';
import { nodeArgs } from '../support/bundles';
import { freshDatabase } from '../support/db';
import { type Receiver, startReceiver } from '../support/receiver';
import { call, type TestServer } from '../support/server';
import { onPostgresServer } from '../support/suites';
import { useTwoInstancesOverNats } from '../support/nats-instances';
import { until } from '../support/until';

const onServer = onPostgresServer('webhook delivery over NATS', 'needs a server two processes share');

/** `n` webhook.updated events on the endpoint's stream, appended in one batch. */
async function appendUpdates(rt: Runtime, organizationId: string, webhookId: string, n: number): Promise<string[]> {
  const time = new Date().toISOString();
  const events = Array.from({ length: n }, (_, i) => ({
    id: newId(),
    type: 'WebhookUpdated',
    data: { webhook_id: webhookId, description: `change ${i}` },
    metadata: { organization_id: organizationId, website_id: null, actor: SYSTEM_ACTOR, correlation_id: newId(), causation_id: null, time },
  }));
  await rt.store.append(webhookStream(webhookId), events, 'any');
  return events.map((e) => e.id);
}

/** Every delivery of the endpoint, through the listing's pages. */
async function allDeliveries(rt: Runtime, webhookId: string) {
  const out = [];
  for (let page = 0; ; page++) {
    const p = await listDeliveries(rt.database.db, webhookId, { page_num: page, page_size: 100 });
    out.push(...p.deliveries);
    if (!p.has_more) return out;
  }
}

/** A receiver that answers after `delayMs`, recording per webhook-id how many of its requests were open at once. */
function slow(rx: Receiver, delayMs: number) {
  const open = new Map<string, number>();
  let overlap = 0;
  rx.answer = async (_p, req, res) => {
    const id = req.headers['webhook-id'];
    const n = (open.get(id) ?? 0) + 1;
    open.set(id, n);
    if (n > 1) overlap++;
    await new Promise((r) => setTimeout(r, delayMs));
    open.set(id, (open.get(id) ?? 1) - 1);
    res.statusCode = 200;
    res.end();
  };
  return { overlap: () => overlap };
}

const distinctIds = (rx: Receiver) => new Set(rx.received.map((r) => r.headers['webhook-id']));

onServer('webhook delivery survives kill -9', () => {
  it('given 1,000 deliveries pending to a slow receiver, when the delivering instance is killed -9 and another starts, then every event is delivered at least once and the listing is exact', async () => {
    const nats = await startNatsServer();
    const database = await freshDatabase();
    const rx = await startReceiver();
    const children: ChildProcess[] = [];
    let rt: Runtime | null = null;
    const spawnChild = async () => {
      const child = spawn(process.execPath, nodeArgs('test/support/webhook-child.ts'), {
        env: { ...process.env, DATABASE_URL: database.url!, NATS_URL: nats.url, DATA_DIR: mkdtempSync(join(tmpdir(), 'aivis-')) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (b: Buffer) => b.toString().includes('started') && resolve());
        child.once('exit', (code) => reject(new Error(`the webhook child exited with ${code} before it started`)));
      });
      return child;
    };
    try {
      slow(rx, 50);
      const first = await spawnChild();
      // this process writes (its runtime's projections run; its workers do not)
      const config = loadConfig({
        DATABASE_URL: database.url!,
        NATS_URL: nats.url,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'aivis-')),
        LOG_LEVEL: 'silent',
        SCHEDULER: 'off',
      });
      rt = await openRuntime(config, silentLogger(), { database: await openPostgres(database.url!) });
      await rt.startProjections();
      const organizationId = newId();
      const made = await createWebhook(
        { store: rt.store, organizationId, actor: SYSTEM_ACTOR },
        { url: `${rx.url}/crash`, event_types: ['webhook.updated'], website_ids: null, format: 'standard', description: null },
      );
      if (isDomainError(made)) throw new Error(made.message);
      const webhookId = made.result.id;
      await rt.waitForReadModels(made.position, ['webhooks'], 30_000);
      const ids = await appendUpdates(rt, organizationId, webhookId, 1000);

      await until('300 delivered', async () => distinctIds(rx).size >= 300, 60_000, 20);
      const exited = new Promise((r) => first.once('exit', r));
      first.kill('SIGKILL');
      await exited;
      const atKill = distinctIds(rx).size;
      expect(atKill).toBeLessThan(1000);

      await spawnChild();
      await until('every event delivered', async () => distinctIds(rx).size >= 1000, 80_000, 100);
      expect([...distinctIds(rx)].sort()).toEqual([...ids].sort());
      const listed = await until(
        'every delivery settled',
        async () => {
          const all = await allDeliveries(rt!, webhookId);
          return all.length === 1000 && all.every((d) => d.status === 'succeeded') && all;
        },
        30_000,
        200,
      );
      expect(new Set(listed.map((d) => d.event_id))).toEqual(new Set(ids));
      expect(listed.every((d) => d.attempts >= 1 && d.last_status_code === 200)).toBe(true);
    } finally {
      for (const c of children) c.kill('SIGKILL');
      await rt?.close();
      await rx.close();
      await database.close();
      await nats.dispose();
    }
  }, 180_000);
});

onServer('webhook delivery on two instances', () => {
  let a: TestServer;
  let b: TestServer;
  let rx: Receiver;
  useTwoInstancesOverNats(
    () => ({ env: { WEBHOOK_ALLOW_PRIVATE: '1' } }),
    async (ctx) => {
      ({ a, b } = ctx);
      rx = await startReceiver();
    },
  );

  describe('two instances', () => {
    it('given 300 events and two instances delivering, then each is delivered once, never two attempts at a time, and the listing says so', async () => {
      const probe = slow(rx, 20);
      const org = await a.org('Two');
      const made = await call(a, 'POST', '/api/v1/webhooks', { key: org.key, body: { url: `${rx.url}/two`, event_types: ['webhook.updated'] } });
      expect(made.status).toBe(201);
      const webhookId = made.body.webhook.id as string;
      await until('b sees the webhook', async () => (await call(b, 'GET', `/api/v1/webhooks/${webhookId}`, { key: org.key })).status === 200);
      const ids = await appendUpdates(b.rt, org.organization_id, webhookId, 300);
      await until('all delivered', async () => distinctIds(rx).size >= 300, 60_000, 50);
      const listed = await until(
        'all settled',
        async () => {
          const all = await allDeliveries(a.rt, webhookId);
          return all.length === 300 && all.every((d) => d.status === 'succeeded') && all;
        },
        20_000,
        100,
      );
      expect(probe.overlap()).toBe(0);
      expect(rx.on('/two')).toHaveLength(300);
      expect(new Set(listed.map((d) => d.event_id))).toEqual(new Set(ids));
      expect(listed.every((d) => d.attempts === 1)).toBe(true);
      await rx.close();
    }, 90_000);
  });
});
