import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/bus/memory';
import type { Bus, BusMessage, Consumer } from '../../src/bus/port';
import { testMetadata } from '../support/events';

export interface BusUnderTest {
  bus: Bus;
  close(): Promise<void>;
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitUntil(what: string, pred: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export const message = (type: string, id: string = randomUUID()): BusMessage => ({
  id,
  type,
  data: { n: id },
  metadata: testMetadata({ correlation_id: id }),
  streamId: `test-${type}`,
  position: '0:0',
});

/** The behaviour every Bus adapter owes the workers. `open` gives each test a bus of its own. */
export function busContract(name: string, open: () => Promise<BusUnderTest>): void {
  describe(`${name} bus contract`, () => {
    let current: BusUnderTest | null = null;
    const consumers: Consumer[] = [];
    const fresh = async () => (current = await open());
    const consume = async (bus: Bus, opts: Parameters<Bus['consume']>[0]) => {
      const c = await bus.consume(opts);
      consumers.push(c);
      return c;
    };

    afterEach(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.stop()));
      await current?.close();
      current = null;
    });

    it('delivers messages published before the durable subscribed, in order', async () => {
      const { bus } = await fresh();
      const sent = [message('Alpha'), message('Alpha'), message('Alpha')];
      await bus.publish(sent);
      const got: string[] = [];
      await consume(bus, { durable: 'late', types: ['Alpha'], handler: async (m) => void got.push(m.id) });
      await waitUntil('3 messages', () => got.length === 3);
      expect(got).toEqual(sent.map((m) => m.id));
    });

    it('delivers the whole message: type, data, metadata, stream id, position', async () => {
      const { bus } = await fresh();
      const sent = { ...message('Alpha'), position: '12:34' };
      const got: BusMessage[] = [];
      await consume(bus, { durable: 'shape', types: ['Alpha'], handler: async (m) => void got.push(m) });
      await bus.publish([sent]);
      await waitUntil('the message', () => got.length === 1);
      expect(got[0]).toEqual(sent);
    });

    it('delivers a message whose id was already published once', async () => {
      const { bus } = await fresh();
      const a = message('Alpha');
      const b = message('Alpha');
      await bus.publish([a, a]);
      await bus.publish([{ ...a, data: { other: true } }]);
      await bus.publish([b]);
      const got: string[] = [];
      await consume(bus, { durable: 'dedupe', types: ['Alpha'], handler: async (m) => void got.push(m.id) });
      await waitUntil('b', () => got.includes(b.id));
      await sleep(200);
      expect(got).toEqual([a.id, b.id]);
    });

    it('retries a failing handler after the backoff delays, then stops once it succeeds', async () => {
      const { bus } = await fresh();
      const attempts: { at: number; count: number | undefined }[] = [];
      await consume(bus, {
        durable: 'retry',
        types: ['Alpha'],
        backoffMs: [150, 400],
        maxDeliver: 5,
        handler: async (_m, delivery?: Delivery) => {
          attempts.push({ at: Date.now(), count: delivery?.count });
          if (attempts.length < 3) throw new Error('engine unavailable');
        },
      });
      await bus.publish([message('Alpha')]);
      await waitUntil('third attempt', () => attempts.length === 3);
      await sleep(600);
      expect(attempts.map((a) => a.count)).toEqual([1, 2, 3]);
      expect(attempts[1].at - attempts[0].at).toBeGreaterThanOrEqual(140);
      expect(attempts[2].at - attempts[1].at).toBeGreaterThanOrEqual(380);
    });

    it('gives a message up after maxDeliver deliveries and goes on with the next', async () => {
      const { bus } = await fresh();
      const bad = message('Alpha');
      const good = message('Alpha');
      let badAttempts = 0;
      const done: string[] = [];
      await consume(bus, {
        durable: 'poison',
        types: ['Alpha'],
        maxDeliver: 3,
        backoffMs: [20],
        handler: async (m) => {
          if (m.id === bad.id) {
            badAttempts++;
            throw new Error('always fails');
          }
          done.push(m.id);
        },
      });
      await bus.publish([bad, good]);
      await waitUntil('three attempts', () => badAttempts === 3 && done.length === 1);
      await sleep(300);
      expect(badAttempts).toBe(3);
      expect(done).toEqual([good.id]);
    });

    it('splits one durable between its consumers, handling no message twice', async () => {
      const { bus } = await fresh();
      const seen = new Map<string, number>();
      const byConsumer = [0, 0];
      const handler = (i: number) => async (m: BusMessage) => {
        seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
        byConsumer[i]++;
        await sleep(10);
      };
      await consume(bus, { durable: 'shared', types: ['Alpha'], concurrency: 2, handler: handler(0) });
      await consume(bus, { durable: 'shared', types: ['Alpha'], concurrency: 2, handler: handler(1) });
      const sent = Array.from({ length: 40 }, () => message('Alpha'));
      await bus.publish(sent);
      await waitUntil('40 messages', () => seen.size === 40);
      await sleep(200);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      expect(byConsumer[0] + byConsumer[1]).toBe(40);
      expect(byConsumer[0]).toBeGreaterThan(0);
      expect(byConsumer[1]).toBeGreaterThan(0);
    });

    it('gives every durable its own copy of each message', async () => {
      const { bus } = await fresh();
      const a: string[] = [];
      const b: string[] = [];
      await consume(bus, { durable: 'one', types: ['Alpha'], handler: async (m) => void a.push(m.id) });
      await consume(bus, { durable: 'two', types: ['Alpha'], handler: async (m) => void b.push(m.id) });
      const sent = [message('Alpha'), message('Alpha')];
      await bus.publish(sent);
      await waitUntil('both durables', () => a.length === 2 && b.length === 2);
      expect(a).toEqual(sent.map((m) => m.id));
      expect(b).toEqual(sent.map((m) => m.id));
    });

    it('delivers only the types a durable asked for', async () => {
      const { bus } = await fresh();
      const single: string[] = [];
      const several: string[] = [];
      await consume(bus, { durable: 'single', types: ['Alpha'], handler: async (m) => void single.push(m.type) });
      await consume(bus, { durable: 'several', types: ['Alpha', 'Gamma'], handler: async (m) => void several.push(m.type) });
      await bus.publish([message('Alpha'), message('Beta'), message('Gamma'), message('Beta'), message('Alpha')]);
      await waitUntil('filtered messages', () => single.length === 2 && several.length === 3);
      await sleep(200);
      expect(single).toEqual(['Alpha', 'Alpha']);
      expect(several).toEqual(['Alpha', 'Gamma', 'Alpha']);
    });

    it('runs up to `concurrency` handlers at once and no more', async () => {
      const { bus } = await fresh();
      let active = 0;
      let peak = 0;
      let done = 0;
      await consume(bus, {
        durable: 'parallel',
        types: ['Alpha'],
        concurrency: 3,
        handler: async () => {
          active++;
          peak = Math.max(peak, active);
          await sleep(60);
          active--;
          done++;
        },
      });
      await bus.publish(Array.from({ length: 9 }, () => message('Alpha')));
      await waitUntil('9 handled', () => done === 9);
      expect(peak).toBe(3);
    });

    it('stop() waits for the handlers in flight and takes no more messages', async () => {
      const { bus } = await fresh();
      let started = 0;
      let finished = 0;
      const c = await consume(bus, {
        durable: 'draining',
        types: ['Alpha'],
        concurrency: 2,
        handler: async () => {
          started++;
          await sleep(250);
          finished++;
        },
      });
      await bus.publish([message('Alpha'), message('Alpha')]);
      await waitUntil('both started', () => started === 2);
      await c.stop();
      expect(finished).toBe(2);
      await bus.publish([message('Alpha')]);
      await sleep(200);
      expect(started).toBe(2);

      // the durable kept its place: a new consumer gets only what was not handled
      const later: string[] = [];
      await consume(bus, { durable: 'draining', types: ['Alpha'], handler: async (m) => void later.push(m.id) });
      await waitUntil('the third message', () => later.length === 1);
      await sleep(200);
      expect(later).toHaveLength(1);
    });

    it('answers ping', async () => {
      const { bus } = await fresh();
      await expect(bus.ping()).resolves.toBeUndefined();
    });
  });
}
