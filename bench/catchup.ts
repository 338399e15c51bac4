import { openPostgresEventStore } from '../src/eventstore/postgres';
import { type EventStore, type Position, START } from '../src/eventstore/port';
import { generateCatalog, waitUntilVisible } from './generate';
import { databaseBench, cpuMeter, info, nowNs, perUnit, report, secondsSince } from './lib';

/** Reads the whole log with readAll in batches of `batch`, as a catching-up projection does. */
export async function readEverything(store: EventStore, batch: number): Promise<{ events: number; seconds: number }> {
  const t0 = nowNs();
  let after: Position = START;
  let events = 0;
  for (;;) {
    const page = await store.readAll(after, batch);
    if (page.length === 0) break;
    events += page.length;
    after = page[page.length - 1].position;
  }
  return { events, seconds: secondsSince(t0) };
}

export const catchup = databaseBench(10, {
  name: 'catchup',
  about: 'readAll in batches over the whole log',
  async run({ d, quick }) {
    const total = quick ? 20_000 : 200_000;
    const store = await openPostgresEventStore(d.db);
    const g = await generateCatalog(store, total, { seed: 11 });
    info(`catchup: ${g.events} catalogue events generated in ${g.seconds.toFixed(1)} s (${g.method})`);
    await d.db.raw('vacuum analyze aivis_events');
    await waitUntilVisible(store, g.last);
    await readEverything(store, 1000); // warm: the table in shared buffers / page cache, as a live store would be
    const cpu = await cpuMeter(d.db);
    const r = await readEverything(store, 1000);
    const c = await cpu.stop();
    if (r.events !== g.events) throw new Error(`read ${r.events} events, wrote ${g.events}`);
    report('catchup_events_per_s', r.events / r.seconds, 'events/s', {
      cpu: perUnit(c, r.events, 'event'),
      goal: { op: '>=', value: 50_000 },
      note: `readAll batches of 1000 (the runner's default) over ${r.events} events; CPU per event: node ${(c.nodeUs / r.events).toFixed(1)} us, Postgres ${(c.pgUs / r.events).toFixed(1)} us`,
    });
    const cpuBig = await cpuMeter(d.db);
    const big = await readEverything(store, 5000);
    const cBig = await cpuBig.stop();
    report('catchup_events_per_s_batch5000', big.events / big.seconds, 'events/s', {
      cpu: perUnit(cBig, big.events, 'event'),
      note: 'readAll batches of 5000',
    });
  },
});
