import { type ProbeNote, noteRecorded, notesErased } from '../support/erasure-probe';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openNatsBus } from '../../src/bus/nats';
import type { Bus, BusMessage, Consumer } from '../../src/bus/port';
import { createRelayProjection } from '../../src/bus/relay';
import { sealedBus } from '../../src/bus/sealed';
import type { EventType } from '../../src/domain/events';
import { openSubjectKeyring } from '../../src/eventstore/keyring';
import type { EventStore } from '../../src/eventstore/port';
import { ProjectionRunner } from '../../src/eventstore/runner';
import { Sealer, sealEventStore } from '../../src/eventstore/sealed';
import { silentLogger } from '../../src/logger';
import { freshStore } from '../support/db';
import { testMetadata } from '../support/events';
import { waitUntil } from './contract';
import { type NatsServerProcess, startNatsServer, storeBytes } from './nats-server';

const logger = silentLogger();

describe('the bus carries erasable fields sealed (NATS JetStream)', () => {
  let env: Awaited<ReturnType<typeof freshStore>>;
  let nats: NatsServerProcess;
  let raw: Bus;
  let bus: Bus;
  let store: EventStore;
  let relay: ProjectionRunner;
  const consumers: Consumer[] = [];
  /** key lookups made to seal (appends, and publishes of text in clear) */
  let sealings = 0;

  /** What a durable consumer of `b` receives of the probe notes, by event id. */
  async function collect(b: Bus, durable: string): Promise<Map<string, BusMessage>> {
    const got = new Map<string, BusMessage>();
    consumers.push(await b.consume({ durable, types: ['ProbeNoteRecorded'], handler: async (m) => void got.set(m.id, m) }));
    return got;
  }

  beforeAll(async () => {
    env = await freshStore();
    nats = await startNatsServer();
    const keyring = await openSubjectKeyring(env.db);
    sealings = 0;
    const sealer = new Sealer({ ...keyring, forSealing: (subjects) => (sealings++, keyring.forSealing(subjects)) });
    store = sealEventStore(env.store, sealer);
    raw = await openNatsBus(nats.url, logger);
    bus = sealedBus(raw, sealer);
    relay = new ProjectionRunner({
      projection: createRelayProjection(bus, ['ProbeNoteRecorded' as EventType]),
      store,
      db: env.db,
      logger,
      pollMs: 50,
    });
    await relay.start();
  });
  afterAll(async () => {
    for (const c of consumers) await c.stop();
    await relay?.stop();
    await raw?.close();
    await nats?.dispose();
    await env?.close();
  });

  const secret = `erasure-marker-bus-${randomUUID()}`;
  const title = `plain-title-${randomUUID()}`;
  const note = noteRecorded({ title, text: secret, lines: [{ n: 1, body: secret }] });
  const noteId = (note.data as ProbeNote).note_id;

  it('given a note relayed to the bus, then the JetStream store on disk holds only its ciphertext, and a worker receives its text', async () => {
    const worker = await collect(bus, 'probe-workers');
    const rawView = await collect(raw, 'probe-raw');
    await store.append(`note-${noteId}`, [note], 'no_stream');
    expect(sealings).toBe(1);

    await waitUntil('the relayed note', () => worker.has(note.id) && rawView.has(note.id), 10_000);
    expect(worker.get(note.id)!.data).toEqual(note.data);
    expect(rawView.get(note.id)!.data).toMatchObject({
      title,
      text: { $sealed: expect.any(String) },
      lines: [{ n: 1, body: { $sealed: expect.any(String) } }],
    });
    // the relay sent the log's own ciphertext: nothing was sealed again on the way
    expect(sealings).toBe(1);
    expect(rawView.get(note.id)!.data).toEqual((await env.store.readStream(`note-${noteId}`))[0].data);
    // the store's files do hold the message (its plain title), never the erasable text
    const disk = storeBytes(nats.storeDir);
    expect(disk.includes(title)).toBe(true);
    expect(disk.includes(secret)).toBe(false);
  });

  it('given the note erased after it was relayed, then a worker that takes its message later receives the fields null', async () => {
    await store.append(`notes-erased-${randomUUID()}`, [notesErased([noteId])], 'no_stream');
    const late = await collect(bus, 'probe-late-workers');
    await waitUntil('the late delivery', () => late.has(note.id), 10_000);
    expect(late.get(note.id)!.data).toEqual({ ...(note.data as ProbeNote), text: null, lines: [{ n: 1, body: null }] });
  });

  it('given a message published straight to the bus with its text in clear, then it is sealed on the way; for an erased subject the text is dropped', async () => {
    const rawView = await collect(raw, 'probe-direct-raw');
    const worker = await collect(bus, 'probe-direct-workers');
    const direct = `erasure-marker-direct-${randomUUID()}`;
    const live = noteRecorded({ text: direct });
    const gone = noteRecorded({ note_id: noteId, text: direct });
    const message = (e: typeof live): BusMessage => ({
      id: e.id,
      type: e.type,
      data: e.data,
      metadata: testMetadata(),
      streamId: 'direct',
      position: '0:0',
    });
    await bus.publish([message(live), message(gone)]);

    await waitUntil('the direct messages', () => rawView.has(live.id) && rawView.has(gone.id) && worker.has(live.id) && worker.has(gone.id), 10_000);
    expect(JSON.stringify(rawView.get(live.id)!.data)).not.toContain(direct);
    expect(rawView.get(gone.id)!.data).toMatchObject({ text: null });
    expect(worker.get(live.id)!.data).toMatchObject({ text: direct });
    expect(worker.get(gone.id)!.data).toMatchObject({ text: null });
    expect(storeBytes(nats.storeDir).includes(direct)).toBe(false);
  });
});
