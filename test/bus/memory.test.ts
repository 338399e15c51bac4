import pino from 'pino';
import { expect, it } from 'vitest';
import { createMemoryBus } from '../../src/bus/memory';
import { startWorker } from '../../src/workers/worker';
import { busContract, message, sleep, waitUntil } from './contract';

busContract('memory', async () => {
  const bus = createMemoryBus();
  return { bus, close: () => bus.close() };
});

it('memory bus: forgets ids after the duplicate window', async () => {
  const bus = createMemoryBus({ duplicateWindowMs: 50 });
  const m = message('Alpha');
  const got: string[] = [];
  await bus.consume({ durable: 'window', types: ['Alpha'], handler: async (x) => void got.push(x.id) });
  await bus.publish([m]);
  await sleep(80);
  await bus.publish([m]);
  await waitUntil('second copy', () => got.length === 2);
  await bus.close();
});

it('memory bus: a handler failing while its consumer stops is retried by the durable', async () => {
  const bus = createMemoryBus();
  let first = true;
  const c1 = await bus.consume({
    durable: 'handover',
    types: ['Alpha'],
    backoffMs: [20],
    handler: async () => {
      await sleep(30);
      if (first) {
        first = false;
        throw new Error('interrupted');
      }
    },
  });
  await bus.publish([message('Alpha')]);
  await sleep(5);
  await c1.stop();
  const got: string[] = [];
  await bus.consume({ durable: 'handover', types: ['Alpha'], handler: async (m) => void got.push(m.id) });
  await waitUntil('retry on the new consumer', () => got.length === 1);
  expect(first).toBe(false);
  await bus.close();
});

it('startWorker: logs one line per failed delivery with the event id and delivery count, then succeeds', async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const bus = createMemoryBus();
  let calls = 0;
  const worker = await startWorker({
    bus,
    name: 'pitch',
    types: ['Alpha'],
    backoffMs: [10],
    logger,
    handle: async () => {
      if (++calls < 3) throw new Error('engine timeout');
    },
  });
  const m = message('Alpha');
  await bus.publish([m]);
  await waitUntil('success', () => calls === 3);
  await worker.stop();
  const failures = lines.filter((l) => l.msg === 'worker failed to handle event');
  expect(failures.map((l) => [l.worker, l.event_id, l.delivery, l.will_retry])).toEqual([
    ['pitch', m.id, 1, true],
    ['pitch', m.id, 2, true],
  ]);
  await bus.close();
});
