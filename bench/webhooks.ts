import { createWebhook } from '../commands/webhooks/webhook';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { isDomainError } from '../src/domain/errors';
import { newId } from '../src/domain/ids';
import type { Runtime } from '../src/runtime';
import { startNatsServer } from '../test/bus/nats-server';
import { startReceiver } from '../test/support/receiver';
import { type Bench, cpuMeter, info, median, nowNs, perUnit, quantile, report, secondsSince, sleep } from './lib';
import { startBenchServer } from './server';

/** `n` endpoints of the organization subscribed to webhook.updated, delivering to `url`/<i>. */
async function endpoints(rt: Runtime, organizationId: string, url: string, n: number): Promise<void> {
  let last = null;
  for (let i = 0; i < n; i++) {
    const r = await createWebhook(
      { store: rt.store, organizationId, actor: SYSTEM_ACTOR },
      { url: `${url}/${i}`, event_types: ['webhook.updated'], website_ids: null, format: 'standard', description: null },
    );
    if (isDomainError(r)) throw new Error(r.message);
    last = r.position;
  }
  await rt.waitForReadModels(last, ['webhooks'], 60_000);
}

/** Appends `n` webhook.updated events (one append each, or one batch), answering their ids. */
async function appendEvents(rt: Runtime, organizationId: string, n: number): Promise<string[]> {
  const time = new Date().toISOString();
  const events = Array.from({ length: n }, () => ({
    id: newId(),
    type: 'WebhookUpdated',
    data: { webhook_id: newId(), description: 'bench' },
    metadata: { organization_id: organizationId, website_id: null, actor: SYSTEM_ACTOR, correlation_id: newId(), causation_id: null, time },
  }));
  await rt.store.append(`bench-webhooks-${newId()}`, events, 'any');
  return events.map((e) => e.id);
}

export const webhooks: Bench = {
  name: 'webhooks',
  about: 'webhook delivery: latency from the append to the receiver (100 endpoints), deliveries per second (one instance, NATS)',
  async run({ quick }) {
    const nats = await startNatsServer();
    const rx = await startReceiver();
    const s = await startBenchServer(0, undefined, { natsUrl: nats.url, workers: true, env: { WEBHOOK_ALLOW_PRIVATE: '1' } });
    try {
      info('receiver: a node http server in the bench process answering 200 at once; the server, its workers and NATS on this machine');
      // latency: events one at a time, each to 100 endpoints
      const eps = 100;
      await endpoints(s.rt, s.organizationId, `${rx.url}/lat`, eps);
      const appendedAt = new Map<string, number>();
      const events = quick ? 20 : 60;
      for (let i = 0; i < events; i++) {
        const at = Date.now();
        const [id] = await appendEvents(s.rt, s.organizationId, 1);
        appendedAt.set(id, at);
        await sleep(100);
      }
      const want = events * eps;
      const t0 = Date.now();
      while (rx.received.length < want && Date.now() - t0 < 60_000) await sleep(50);
      const lat = rx.received
        .filter((r) => appendedAt.has(r.headers['webhook-id']))
        .map((r) => r.at - appendedAt.get(r.headers['webhook-id'])!)
        .sort((a, b) => a - b);
      report('webhook_delivery_ms', quantile(lat, 0.95), 'ms', {
        goal: { op: '<=', value: 1000 },
        note: `p95 from the append of an event to the receiver's request, ${events} events 100 ms apart each to ${eps} endpoints (${lat.length}/${want} received); median ${median(lat).toFixed(0)} ms`,
      });

      // throughput: a batch of events to 20 endpoints
      rx.received.length = 0;
      const tp = 20;
      await endpoints(s.rt, s.organizationId, `${rx.url}/tp`, tp);
      const batch = quick ? 100 : 250;
      const total = batch * (tp + eps);
      const cpu = await cpuMeter(s.rt.database.db);
      const t1 = nowNs();
      await appendEvents(s.rt, s.organizationId, batch);
      const t2 = Date.now();
      while (rx.received.length < total && Date.now() - t2 < 120_000) await sleep(20);
      const secs = secondsSince(t1);
      const used = await cpu.stop();
      const got = rx.received.length;
      report('webhook_deliveries_per_s', got / secs, 'deliveries/s', {
        cpu: perUnit(used, Math.max(1, got), 'delivery'),
        goal: { op: '>=', value: 1000 },
        note: `${got}/${total} deliveries (${batch} events to ${tp + eps} endpoints) in ${secs.toFixed(1)} s, one instance; CPU per delivery: node ${(used.nodeUs / got).toFixed(0)} µs (server, workers and receiver), Postgres ${(used.pgUs / got).toFixed(0)} µs`,
      });
    } finally {
      await s.close();
      await rx.close();
      await nats.dispose();
    }
  },
};
