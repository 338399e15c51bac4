import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { catalogue } from '../src/domain/events';
import { sealed, subject } from '../src/domain/sealing';
import { openSubjectKeyring } from '../src/eventstore/keyring';
import type { EventStore, NewEvent, Position } from '../src/eventstore/port';
import { START } from '../src/eventstore/port';
import { openPostgresEventStore } from '../src/eventstore/postgres';
import { Sealer, sealEventStore } from '../src/eventstore/sealed';
import { databaseBench, cpuMeter, info, nowNs, perUnit, quantile, report, secondsSince } from './lib';
import { waitUntilVisible } from './generate';
import { testMetadata } from '../test/support/events';

const WRITERS = 8;
const TEXT = 'Our pricing starts at 29 dollars a month for small teams, with a free trial of fourteen days. '.repeat(11);

/** A note type of the bench's own, one erasable field; the plain twin has the same payload and no marker. */
const benchCatalogue = {
  ...catalogue,
  BenchNoteRecorded: z.object({ note_id: subject('note'), title: z.string(), text: sealed(z.string()) }),
};

const note = (type: string): NewEvent => ({
  id: randomUUID(),
  type,
  data: { note_id: randomUUID(), title: 'A bench note', text: TEXT },
  metadata: testMetadata({ organization_id: 'bench' }),
});

/** 8 writers, one event per append, each a new note (so each sealed append makes a new subject key). */
async function drive(store: EventStore, type: string, seconds: number) {
  const lat: number[] = [];
  const t0 = nowNs();
  const deadline = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (Date.now() < deadline) {
        const e = note(type);
        const a = nowNs();
        await store.append(`note-${randomUUID()}`, [e], 'no_stream');
        lat.push(Number(nowNs() - a) / 1e6);
      }
    }),
  );
  const s = secondsSince(t0);
  lat.sort((a, b) => a - b);
  return { perSecond: lat.length / s, p50: quantile(lat, 0.5), p95: quantile(lat, 0.95), n: lat.length };
}

/** Catch-up reads of the whole log, 4,000 events a read (as a rebuild reads); returns events/s. */
async function readThrough(store: EventStore, type: string): Promise<{ perSecond: number; n: number }> {
  let after: Position = START;
  let n = 0;
  const t0 = nowNs();
  for (;;) {
    const page = await store.readAll(after, 4000);
    if (!page.length) break;
    for (const e of page) if (e.type === type) n++;
    after = page[page.length - 1].position;
  }
  return { perSecond: n / secondsSince(t0), n };
}

export const erasure = databaseBench(WRITERS + 2, {
  name: 'erasure',
  about: 'sealed appends (a new subject key each) and catch-up reads of sealed events, against the same events unsealed',
  async run({ d, quick }) {
    const seconds = quick ? 2 : 6;
    const log = await openPostgresEventStore(d.db);
    const store = sealEventStore(log, new Sealer(await openSubjectKeyring(d.db, { logInSameDatabase: true }), benchCatalogue));
    info(
      `erasure: ${WRITERS} writers × ${seconds} s per kind, one ${TEXT.length}-character note per append, each its own subject; fresh database ${d.name}`,
    );
    const metered = async <T extends { n: number }>(run: () => Promise<T>) => {
      const cpu = await cpuMeter(d.db);
      const r = await run();
      return { ...r, cpu: perUnit(await cpu.stop(), Math.max(1, r.n), 'event') };
    };
    await drive(store, 'BenchNotePlain', 0.5);
    const plain = await drive(store, 'BenchNotePlain', seconds);
    const sealedRun = await metered(() => drive(store, 'BenchNoteRecorded', seconds));
    report('sealed_append_events_per_s', sealedRun.perSecond, 'events/s', {
      cpu: sealedRun.cpu,
      ref: { name: 'same events unsealed', value: plain.perSecond },
      note: `${sealedRun.n} appends, p50 ${sealedRun.p50.toFixed(2)} ms p95 ${sealedRun.p95.toFixed(2)} ms (unsealed p50 ${plain.p50.toFixed(2)} ms); each makes its subject's key (one upsert) before the append`,
    });

    await waitUntilVisible(log, await log.lastPosition());
    await d.db.raw('vacuum analyze');
    // a fresh keyring: every key is unwrapped once, as on a rebuild after a start
    const cold = sealEventStore(log, new Sealer(await openSubjectKeyring(d.db), benchCatalogue));
    const opened = await metered(() => readThrough(cold, 'BenchNoteRecorded'));
    const warm = await readThrough(cold, 'BenchNoteRecorded');
    const raw = await readThrough(log, 'BenchNoteRecorded');
    report('sealed_read_events_per_s', opened.perSecond, 'events/s', {
      cpu: opened.cpu,
      ref: { name: 'the same events read without opening', value: raw.perSecond },
      note: `readAll of the whole log (${opened.n} sealed notes among unsealed ones, 4,000 a read): one key lookup per read, keys unwrapped once; with the keys cached ${Math.round(warm.perSecond)}/s`,
    });
  },
});
