import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNatsBus } from '../../src/bus/nats';
import type { Bus, BusMessage } from '../../src/bus/port';
import { createRelayProjection } from '../../src/bus/relay';
import { positionToString } from '../../src/eventstore/port';
import { ProjectionRunner } from '../../src/eventstore/runner';
import { silentLogger } from '../../src/logger';
import { freshStore } from '../support/db';
import { anEvent } from '../support/events';
import { sleep, waitUntil } from './contract';
import { type NatsServerProcess, startNatsServer } from './nats-server';

const logger = silentLogger();
const EVENTS = 200;

describe('bus relay (event store -> NATS)', () => {
  let env: Awaited<ReturnType<typeof freshStore>>;
  let server: NatsServerProcess;

  beforeAll(async () => {
    env = await freshStore();
    server = await startNatsServer();
  });

  afterAll(async () => {
    await server?.dispose();
    await env?.close();
  });

  // Consumers are at-least-once: after a SIGKILL the server redelivers messages whose acks it had not yet written
  // to disk (about 20 here; none after a graceful stop), so "once" is by event id, which workers key their appends on.
  it('given events in the store, when NATS is killed mid-relay and restarted, then the stream holds each event once and the consumer receives them all', async () => {
    const appended: { id: string; position: string }[] = [];
    for (let s = 0; s < EVENTS / 10; s++) {
      const events = Array.from({ length: 10 }, () => anEvent());
      await env.store.append(`relay-test-${s}`, events, 'any');
      const stored = await env.store.readStream(`relay-test-${s}`);
      for (const e of stored) appended.push({ id: e.id, position: positionToString(e.position) });
    }

    // one try per message: the publish cut by the kill fails the batch, which the runner then retries from its checkpoint
    const relayBus = await openNatsBus(server.url, logger, { publishAttempts: 1, publishTimeoutMs: 300 });
    const workerBus = await openNatsBus(server.url, logger, { ackWaitMs: 2000 });
    const received = new Map<string, BusMessage[]>();
    const consumer = await workerBus.consume({
      durable: 'relay-check',
      types: ['ApiKeyRevoked'],
      concurrency: 4,
      handler: async (m) => void received.set(m.id, [...(received.get(m.id) ?? []), m]),
    });

    // one message at a time, and the server is killed in the middle of a batch: part of it is stored, publish() fails
    let publishCalls = 0;
    let relayed = 0;
    let killed = false;
    const slowBus: Bus = {
      ...relayBus,
      name: relayBus.name,
      publish: async (messages) => {
        publishCalls++;
        for (const m of messages) {
          await relayBus.publish([m]);
          relayed++;
          if (relayed === 75 && !killed) {
            killed = true;
            await server.kill('SIGKILL');
          }
          await sleep(1);
        }
      },
    };
    const runner = new ProjectionRunner({
      projection: createRelayProjection(slowBus),
      store: env.store,
      db: env.db,
      logger,
      batchSize: 10,
      pollMs: 50,
    });
    await runner.start();

    await waitUntil('the kill in the middle of the relay', () => killed, 10_000);
    await sleep(1500); // the runner fails the batch and retries it at least once while the server is down
    await server.start(); // same port, same store directory

    await waitUntil('every event on the bus', () => received.size === EVENTS, 30_000);
    await sleep(300);

    // every event arrived, as it was in the store
    expect([...received.keys()].sort()).toEqual(appended.map((e) => e.id).sort());
    for (const e of appended) expect(received.get(e.id)![0].position).toBe(e.position);
    // the cut batch was republished from the checkpoint (more publish calls than batches) ...
    expect(publishCalls).toBeGreaterThan(EVENTS / 10);
    expect(relayed).toBeGreaterThan(EVENTS);
    // ... yet JetStream holds each event once: the message id (= event id) dropped the repeats
    const admin = await connect({ servers: server.url });
    const info = await (await admin.jetstreamManager()).streams.info('AIVIS_EVENTS');
    await admin.close();
    expect(info.state.messages).toBe(EVENTS);
    // and the relay's checkpoint reached the head
    expect(runner.status().position).toBe(positionToString(await env.store.headPosition()));

    await runner.stop();
    await consumer.stop();
    await Promise.all([relayBus.close(), workerBus.close()]);
  });
});
