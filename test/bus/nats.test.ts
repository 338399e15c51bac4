import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { connect, nanos, type NatsConnection } from 'nats';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNatsConfig, openNatsBus } from '../../src/bus/nats';
import type { BusMessage } from '../../src/bus/port';
import { silentLogger } from '../../src/logger';
import { busContract, message, sleep, waitUntil } from './contract';
import { type NatsServerProcess, startNatsServer } from './nats-server';

const unique = () => randomBytes(4).toString('hex');
// BUS_DEBUG=1 shows the bus's own log lines (reconnects, consumer recreation)
const logger = process.env.BUS_DEBUG ? pino({ level: 'debug' }) : silentLogger();

/** Non-disruptive tests: the shared server when NATS_URL is set, else a private one; a stream per test either way. */
let shared: NatsServerProcess | null = null;
let sharedUrl = '';
let admin: NatsConnection;

beforeAll(async () => {
  if (process.env.NATS_URL) sharedUrl = process.env.NATS_URL;
  else {
    shared = await startNatsServer();
    sharedUrl = shared.url;
  }
  admin = await connect({ servers: sharedUrl });
});

afterAll(async () => {
  await admin?.close();
  await shared?.dispose();
});

async function openPrivateStream(url = sharedUrl) {
  const id = unique();
  const stream = `AIVIS_TEST_${id}`;
  const subjectPrefix = `aivis-test-${id}.events`;
  const bus = await openNatsBus(url, logger, { stream, subjectPrefix });
  return { bus, stream, subjectPrefix };
}

const deleteStream = async (stream: string) => {
  const jsm = await admin.jetstreamManager();
  await jsm.streams.delete(stream).catch(() => undefined);
};

busContract('nats', async () => {
  const { bus, stream } = await openPrivateStream();
  return {
    bus,
    close: async () => {
      await bus.close();
      await deleteStream(stream);
    },
  };
});

describe('nats bus', () => {
  it('creates the stream from infra/nats.json, and puts a drifted one back', async () => {
    const cfg = loadNatsConfig();
    expect(cfg.stream.name).toBe('AIVIS_EVENTS');
    const { bus, stream, subjectPrefix } = await openPrivateStream();
    const jsm = await admin.jetstreamManager();
    const info = await jsm.streams.info(stream);
    expect(info.config).toMatchObject({
      subjects: [`${subjectPrefix}.>`],
      storage: 'file',
      retention: 'limits',
      discard: 'old',
      max_age: nanos(cfg.stream.max_age_ms),
      duplicate_window: nanos(cfg.stream.duplicate_window_ms),
    });
    await bus.close();

    await jsm.streams.update(stream, { max_age: nanos(86_400_000), subjects: [`${subjectPrefix}.>`] });
    const again = await openNatsBus(sharedUrl, logger, { stream, subjectPrefix });
    expect((await jsm.streams.info(stream)).config.max_age).toBe(nanos(cfg.stream.max_age_ms));
    await again.close();
    await deleteStream(stream);
  });

  it('has stored every message once publish resolves, one subject per event type', async () => {
    const { bus, stream, subjectPrefix } = await openPrivateStream();
    await bus.publish([message('Alpha'), message('Beta'), message('Alpha')]);
    const jsm = await admin.jetstreamManager();
    const info = await jsm.streams.info(stream, { subjects_filter: '>' });
    expect(info.state.messages).toBe(3);
    expect(info.state.subjects).toEqual({ [`${subjectPrefix}.Alpha`]: 2, [`${subjectPrefix}.Beta`]: 1 });
    await bus.close();
    await deleteStream(stream);
  });

  it('given busy types, when a consumer of other types consumes, then the server never sends it the busy messages (one filter per consumer before 2.10)', async () => {
    const id = unique();
    const stream = `AIVIS_TEST_${id}`;
    const subjectPrefix = `aivis-test-${id}.events`;
    const bus = await openNatsBus(sharedUrl, logger, { stream, subjectPrefix, busyTypes: ['Busy'] });
    const got: string[] = [];
    const quiet = await bus.consume({ durable: 'quiet', types: ['Alpha', 'Beta'], handler: async (m) => void got.push(m.type) });
    const busy = await bus.consume({ durable: 'busy', types: ['Busy'], handler: async (m) => void got.push(m.type) });
    await bus.publish([message('Busy'), message('Alpha'), message('Busy'), message('Busy'), message('Beta'), message('Gamma')]);
    await waitUntil('the five wanted messages', () => got.length === 5);
    const jsm = await admin.jetstreamManager();
    expect((await jsm.streams.info(stream, { subjects_filter: '>' })).state.subjects).toEqual({
      [`${subjectPrefix}.busy.Busy`]: 3,
      [`${subjectPrefix}.Alpha`]: 1,
      [`${subjectPrefix}.Beta`]: 1,
      [`${subjectPrefix}.Gamma`]: 1,
    });
    // delivered to the quiet durable: its two types and the other quiet one (Gamma, filtered here), no busy message
    expect((await jsm.consumers.info(stream, 'quiet')).delivered.consumer_seq).toBeLessThanOrEqual(3);
    expect(got.filter((t) => t === 'Busy')).toHaveLength(3);
    await Promise.all([quiet.stop(), busy.stop()]);
    await bus.close();
    await deleteStream(stream);
  });

  it('shares a durable between two connections (two processes) without handling a message twice', async () => {
    const { bus: a, stream, subjectPrefix } = await openPrivateStream();
    const b = await openNatsBus(sharedUrl, logger, { stream, subjectPrefix });
    const seen = new Map<string, number>();
    const per = { a: 0, b: 0 };
    const handler = (who: 'a' | 'b') => async (m: BusMessage) => {
      seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
      per[who]++;
      await sleep(5);
    };
    const ca = await a.consume({ durable: 'workers', types: ['Alpha'], concurrency: 2, handler: handler('a') });
    const cb = await b.consume({ durable: 'workers', types: ['Alpha'], concurrency: 2, handler: handler('b') });
    await a.publish(Array.from({ length: 60 }, () => message('Alpha')));
    await waitUntil('60 messages', () => seen.size === 60);
    await sleep(200);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(per.a).toBeGreaterThan(0);
    expect(per.b).toBeGreaterThan(0);
    await Promise.all([ca.stop(), cb.stop()]);
    await Promise.all([a.close(), b.close()]);
    await deleteStream(stream);
  });

  it('keeps consuming and publishing across a NATS restart (own server, killed with SIGKILL mid-stream)', async () => {
    const server = await startNatsServer();
    try {
      const bus = await openNatsBus(server.url, logger, { ackWaitMs: 2000 });
      const seen = new Map<string, number>();
      const consumer = await bus.consume({
        durable: 'survivor',
        types: ['Alpha'],
        concurrency: 2,
        handler: async (m) => {
          await sleep(10);
          seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
        },
      });
      const before = Array.from({ length: 40 }, () => message('Alpha'));
      await bus.publish(before);
      await waitUntil('some messages handled', () => seen.size >= 10);

      await server.kill('SIGKILL');
      expect(seen.size).toBeLessThan(40);
      await expect(bus.ping()).rejects.toThrow('disconnected');
      await sleep(300);
      await server.start(); // same port, same store

      // publish waits for the reconnect and JetStream's ack
      const after = Array.from({ length: 10 }, () => message('Alpha'));
      await bus.publish(after);
      await waitUntil('every message, before and after the restart', () => seen.size === 50, 15_000);
      await bus.ping();
      // at-least-once: an ack lost in the crash means a redelivery, never a loss
      expect([...seen.keys()].sort()).toEqual([...before, ...after].map((m) => m.id).sort());
      await consumer.stop();
      await bus.close();
    } finally {
      await server.dispose();
    }
  });

  it('recreates its stream and durable when the server comes back with an empty store', async () => {
    const server = await startNatsServer();
    try {
      const bus = await openNatsBus(server.url, logger);
      const got: string[] = [];
      const consumer = await bus.consume({ durable: 'phoenix', types: ['Alpha'], handler: async (m) => void got.push(m.id) });
      await server.kill('SIGKILL');
      rmSync(server.storeDir, { recursive: true, force: true });
      await server.start();
      // the consume loop notices the missing consumer and recreates stream and durable
      const jsmConn = await connect({ servers: server.url });
      const jsm = await jsmConn.jetstreamManager();
      const deadline = Date.now() + 15_000;
      for (;;) {
        const ok = await jsm.consumers.info('AIVIS_EVENTS', 'phoenix').then(
          () => true,
          () => false,
        );
        if (ok) break;
        if (Date.now() > deadline) throw new Error('durable was not recreated');
        await sleep(100);
      }
      await jsmConn.close();
      const m = message('Alpha');
      await bus.publish([m]);
      await waitUntil('message after the reset', () => got.includes(m.id), 10_000);
      await consumer.stop();
      await bus.close();
    } finally {
      await server.dispose();
    }
  });
});
