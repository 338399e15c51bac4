import { openSubjectKeyring } from '../src/eventstore/keyring';
import { openPostgresEventStore } from '../src/eventstore/postgres';
import { Sealer, sealEventStore } from '../src/eventstore/sealed';
import type { EventStore } from '../src/eventstore/port';
import { catalogEvent, generateCatalog, makeSites, rng, type Site } from './generate';
import { databaseBench, cpuMeter, info, nowNs, perUnit, quantile, report, secondsSince } from './lib';

const WRITERS = 8;

/**
 * 8 writers, each owning its own websites' catalogue streams, append for `seconds` with the exact expected revision
 * (as a command does), `perAppend` events per append. Returns events/s and per-append latencies (ms).
 */
async function drive(store: EventStore, db: import('knex').Knex, sites: Site[], perAppend: number, seconds: number, seed: number) {
  const r = rng(seed);
  const cpu = await cpuMeter(db);
  let events = 0;
  const lat: number[] = [];
  const t0 = nowNs();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const mine = sites.filter((_, i) => i % WRITERS === w);
      for (let k = 0; Date.now() < deadline; k++) {
        const site = mine[k % mine.length];
        const batch = Array.from({ length: perAppend }, (_, i) => catalogEvent(r, site, Number(site.revision) + 1 + i, 0.5));
        const expected = site.revision < 0n ? 'no_stream' : site.revision;
        const a = nowNs();
        await store.append(`catalog-${site.websiteId}`, batch, expected);
        lat.push(Number(nowNs() - a) / 1e6);
        site.revision += BigInt(perAppend);
        events += perAppend;
      }
    }),
  );
  const s = secondsSince(t0);
  const { nodeUs, pgUs } = await cpu.stop();
  lat.sort((a, b) => a - b);
  return {
    perEvent: perUnit({ nodeUs, pgUs }, events, 'event'),
    cpu: `CPU per append: node ${(nodeUs / lat.length).toFixed(0)} us (event generation included), Postgres backends ${(pgUs / lat.length).toFixed(0)} us`,
    perSecond: events / s,
    events,
    seconds: s,
    appends: lat.length,
    p50: quantile(lat, 0.5),
    p95: quantile(lat, 0.95),
  };
}

// one connection per writer and a spare, as the runtime's pool would have
export const append = databaseBench(WRITERS + 2, {
  name: 'append',
  about: '8 concurrent writers appending to many streams through the Postgres event store (and its sealing layer)',
  async run({ d, quick }) {
    const seconds = quick ? 3 : 10;
    // through the sealing layer, as the runtime appends (these events have no erasable field)
    const store = sealEventStore(await openPostgresEventStore(d.db), new Sealer(await openSubjectKeyring(d.db)));
    // a store that already holds events (and has been analyzed), as a running one does
    const prefill = await generateCatalog(store, quick ? 20_000 : 100_000, { seed: 99 });
    await d.db.raw('analyze');
    info(
      `append: ${WRITERS} writers × ${seconds} s per mode, 400 catalogue streams (50 per writer, exact expected revision), pool ${WRITERS + 2}, fresh database ${d.name} pre-filled with ${prefill.events} events`,
    );
    // warm the pool and the plan cache
    await drive(store, d.db, makeSites(7, 4, 10), 1, 0.5, 7);
    const single = await drive(store, d.db, makeSites(1, 20, 20), 1, seconds, 1);
    report('append_events_per_s', single.perSecond, 'events/s', {
      cpu: single.perEvent,
      goal: { op: '>=', value: 5000 },
      note: `single-event appends; ${single.appends} appends, p50 ${single.p50.toFixed(2)} ms p95 ${single.p95.toFixed(2)} ms; ${single.cpu}`,
    });
    const batch = await drive(store, d.db, makeSites(2, 20, 20), 10, seconds, 2);
    report('append_events_per_s_batch10', batch.perSecond, 'events/s', {
      cpu: batch.perEvent,
      ref: { name: 'append_events_per_s', value: single.perSecond },
      goal: { op: '>=', value: 5000 },
      note: `10-event appends; ${batch.appends} appends, p50 ${batch.p50.toFixed(2)} ms p95 ${batch.p95.toFixed(2)} ms; ${batch.cpu}`,
    });
  },
});
