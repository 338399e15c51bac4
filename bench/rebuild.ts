import { activityProjection as activityOf } from '../projections/activity';
import { feed } from '../src/areas';
import { decodeEvent } from '../src/domain/events';
import { openSubjectKeyring } from '../src/eventstore/keyring';
import { openPostgresEventStore } from '../src/eventstore/postgres';
import { Sealer, sealEventStore } from '../src/eventstore/sealed';
import type { EventStore, RecordedEvent } from '../src/eventstore/port';
import type { Projection } from '../src/eventstore/projection';
import { ProjectionRunner } from '../src/eventstore/runner';
import { silentLogger } from '../src/logger';
import { generateCatalog, waitUntilVisible } from './generate';
import { databaseBench, cpuMeter, info, nowNs, perUnit, report, secondsSince } from './lib';

const activityProjection = activityOf(feed);

const us = (ns: bigint, n: number) => Number(ns) / 1e3 / n;

/** The runner's own decode (zod parse per event) against a plain copy, over events already read. */
function decodeCost(events: RecordedEvent[]): { zodUs: number; copyUs: number } {
  const rounds = 3;
  let sink = 0;
  let t0 = nowNs();
  for (let k = 0; k < rounds; k++) for (const e of events) sink += decodeEvent(e.id, e.type, e.data).type.length;
  const zod = nowNs() - t0;
  t0 = nowNs();
  for (let k = 0; k < rounds; k++) for (const e of events) sink += { ...e, data: { ...(e.data as object) } }.type.length;
  const copy = nowNs() - t0;
  if (sink < 0) throw new Error('unreachable');
  return { zodUs: us(zod, events.length * rounds), copyUs: us(copy, events.length * rounds) };
}

export const rebuild = databaseBench(10, {
  name: 'rebuild',
  about: 'activity projection rebuilt from zero beside the live one, then swapped in',
  async run({ d, quick }) {
    const total = quick ? 50_000 : 1_000_000;
    // through the sealing layer, as the runtime reads (these events have no erasable field)
    const store = sealEventStore(await openPostgresEventStore(d.db), new Sealer(await openSubjectKeyring(d.db)));
    const g = await generateCatalog(store, total, { seed: 23 });
    info(
      `rebuild: ${g.events} catalogue events (TopicCreated/CompetitorAdded/PromptCreated, ${g.sites.length} websites of 50 organizations) generated in ${g.seconds.toFixed(1)} s = ${Math.round(g.events / g.seconds)} events/s via ${g.method}`,
    );
    await d.db.raw('vacuum analyze aivis_events');
    await waitUntilVisible(store, g.last);

    // the real runner over the real projection; the store and the projection are wrapped only to time their share
    const t = { read: 0n, apply: 0n, batches: 0 };
    const timed = async <T>(read: () => Promise<T>): Promise<T> => {
      const t0 = nowNs();
      try {
        return await read();
      } finally {
        t.read += nowNs() - t0;
        t.batches++;
      }
    };
    // the runner reads by type where the store can (the activity feed handles some types)
    const timedStore: EventStore = {
      ...store,
      readAll: (after, max) => timed(() => store.readAll(after, max)),
      readAllOfTypes: store.readAllOfTypes && ((...args) => timed(() => store.readAllOfTypes!(...args))),
    };
    const timedProjection: Projection = {
      ...activityProjection,
      // not async, like the projection's own: a wrapper that awaited would keep each batch's events alive while it is written
      apply(trx, events, ctx) {
        const t0 = nowNs();
        return activityProjection.apply(trx, events, ctx).finally(() => {
          t.apply += nowNs() - t0;
        });
      },
    };
    const runner = new ProjectionRunner({ projection: timedProjection, store: timedStore, db: d.db, logger: silentLogger() });
    await runner.prepare();
    const cpu = await cpuMeter(d.db);
    const t0 = nowNs();
    const n = await runner.rebuild();
    const seconds = secondsSince(t0);
    const c = await cpu.stop();
    const rows = Number((await d.db('rm_activity').count({ n: '*' }))[0].n);
    if (n !== g.events || rows !== g.events) throw new Error(`rebuild processed ${n} events into ${rows} rows, expected ${g.events}`);

    const sample = await store.readAll([0n, 0n], Math.min(20_000, g.events));
    const dc = decodeCost(sample);
    report('rebuild_events_per_s', g.events / seconds, 'events/s', {
      cpu: perUnit(c, g.events, 'event'),
      goal: { op: '>=', value: 50_000 },
      note: `ProjectionRunner(activity).rebuild() (shadow tables, indexes built at the end, swap), ${g.events} events -> ${rows} feed rows in ${seconds.toFixed(1)} s, ${t.batches} catch-up reads`,
    });
    report('rebuild_cpu_us_per_event', (c.nodeUs + c.pgUs) / g.events, 'us', {
      note: `CPU time: node ${(c.nodeUs / g.events).toFixed(1)} us + Postgres ${(c.pgUs / g.events).toFixed(1)} us (its backends) per event (2 cores: the wall-clock floor is about half the sum if both sides overlap, the sum if they don't)`,
    });
    report('rebuild_read_us_per_event', us(t.read, g.events), 'us', {
      note: "the store's catch-up reads (SQL + pg JSON decode + mapping; by type where the store can), wall time: each overlaps the write of the batch before it",
    });
    report('rebuild_apply_us_per_event', us(t.apply, g.events), 'us', { note: 'activity apply: map + one INSERT … SELECT unnest per batch' });
    report('decode_zod_us_per_event', dc.zodUs, 'us', {
      note: `decodeEvent (zod parse) in isolation over ${sample.length} events; a plain copy costs ${dc.copyUs.toFixed(2)} us`,
    });
  },
});
