import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MalformedEventError } from '../../src/domain/events';
import { openSubjectKeyring, type SubjectKeyring } from '../../src/eventstore/keyring';
import { appendMany, comparePositions, type EventStore, type Position, type RecordedEvent } from '../../src/eventstore/port';
import { Sealer, SubjectErasedError, sealEventStore } from '../../src/eventstore/sealed';
import { type ProbeNote, noteRecorded, notesErased } from '../support/erasure-probe';
import { anEvent, sleep } from '../support/events';

export interface SealingEnv {
  /** the event store as it keeps events (no sealing) */
  log: EventStore;
  /** the database the subject keys live in */
  db: Knex;
  /** a second instance's own connections to the same log and key table, where the store allows one */
  second?: { log: EventStore; db: Knex };
  close(): Promise<void>;
}

/** A keyring that counts its lookups. */
function counted(k: SubjectKeyring) {
  const n = { opening: 0, sealing: 0 };
  const keyring: SubjectKeyring = {
    forOpening: (s) => (n.opening++, k.forOpening(s)),
    forSealing: (s) => (n.sealing++, k.forSealing(s)),
    shred: (s, c) => k.shred(s, c),
  };
  return { keyring, n };
}

const marker = (what: string) => `erasure-marker-${what}-${randomUUID()}`;

/**
 * What the sealing layer guarantees over any event store adapter: the log keeps erasable fields only as ciphertext,
 * every read path opens them, an erased subject reads as null at once on every instance, and stays erased.
 */
export function sealingContract(name: string, open: () => Promise<SealingEnv>): void {
  describe(name, () => {
    let env: SealingEnv;
    let store: EventStore;
    let counts: { opening: number; sealing: number };
    /** a second instance: its own keyring (and key cache) over the same log and key table */
    let other: EventStore;

    beforeAll(async () => {
      env = await open();
      const c = counted(await openSubjectKeyring(env.db));
      counts = c.n;
      store = sealEventStore(env.log, new Sealer(c.keyring));
      other = sealEventStore(env.second?.log ?? env.log, new Sealer(await openSubjectKeyring(env.second?.db ?? env.db)));
    }, 180_000);
    afterAll(async () => {
      await env?.close();
    });

    /** Every event of these ids through readAll (and readAllOfTypes where the store has it), from `after`. */
    async function caughtUp(s: EventStore, after: Position, ids: string[]): Promise<{ all: RecordedEvent[]; typed: RecordedEvent[] | null }> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const all: RecordedEvent[] = [];
        let cursor = after;
        for (;;) {
          const page = await s.readAll(cursor, 500);
          if (!page.length) break;
          all.push(...page.filter((e) => ids.includes(e.id)));
          cursor = page[page.length - 1].position;
        }
        let typed: RecordedEvent[] | null = null;
        if (s.readAllOfTypes) {
          typed = [];
          let at = after;
          for (;;) {
            const b = await s.readAllOfTypes(at, 500, ['ProbeNoteRecorded'], ['ProbeNoteRecorded']);
            if (!b.scanned) break;
            typed.push(...b.events.filter((e) => ids.includes(e.id)));
            at = b.scannedTo;
          }
        }
        if (all.length === ids.length && (typed === null || typed.length === ids.length)) return { all, typed };
        if (Date.now() > deadline) throw new Error('the appended events did not become visible to catch-up reads');
        await sleep(20);
      }
    }

    const noteIn = (events: RecordedEvent[], id: string) => events.find((e) => e.id === id)!.data as ProbeNote;

    /** A note appended through the sealing store; returns its id. */
    async function appendNote(): Promise<string> {
      const e = noteRecorded({ text: marker('note') });
      const id = (e.data as ProbeNote).note_id;
      await store.append(`note-${id}`, [e], 'no_stream');
      return id;
    }

    it('given a note appended through the sealing store, then the log keeps its erasable fields only as ciphertext and every read path opens them', async () => {
      const head = await env.log.headPosition();
      const m = { text: marker('text'), body: marker('body'), email: marker('email') };
      const e = noteRecorded({ text: m.text, lines: [{ n: 1, body: m.body }], meta: { author_email: m.email } });
      const stream = `note-${(e.data as ProbeNote).note_id}`;
      await store.append(stream, [e], 'no_stream');

      const raw = (await caughtUp(env.log, head, [e.id])).all[0];
      const stored = JSON.stringify(raw.data);
      for (const v of Object.values(m)) expect(stored).not.toContain(v);
      expect(raw.data).toMatchObject({
        title: 'a note',
        text: { $sealed: expect.any(String) },
        lines: [{ n: 1, body: { $sealed: expect.any(String) } }],
        meta: { $sealed: expect.any(String) },
      });

      const { all, typed } = await caughtUp(store, head, [e.id]);
      expect(noteIn(all, e.id)).toEqual(e.data);
      if (typed) expect(noteIn(typed, e.id)).toEqual(e.data);
      expect((await store.readStream(stream))[0].data).toEqual(e.data);
    });

    it('given 300 notes of 300 subjects, then sealing them and reading them back each look the keys up once', async () => {
      const events = Array.from({ length: 300 }, (_, i) => noteRecorded({ text: `note ${i}` }));
      const stream = `notes-${randomUUID()}`;
      const before = { ...counts };
      await store.append(stream, events, 'no_stream');
      expect(counts.sealing - before.sealing).toBe(1);
      const read = await store.readStream(stream);
      expect(counts.opening - before.opening).toBe(1);
      expect(read.map((e) => (e.data as ProbeNote).text)).toEqual(events.map((_, i) => `note ${i}`));
    });

    it('given appendMany of 200 notes on 200 streams, one of an erased subject, then the others are sealed in one key lookup and read back opened, and that one is refused alone', async () => {
      const gone = noteRecorded({ text: marker('gone') });
      const goneId = (gone.data as ProbeNote).note_id;
      await store.append(`note-${goneId}`, [gone], 'no_stream');
      await store.append(`erase-${goneId}`, [notesErased([goneId])], 'no_stream');
      const notes = Array.from({ length: 200 }, (_, i) => noteRecorded({ text: `many ${i} ${marker('many')}` }));
      const streamOf = (e: (typeof notes)[number]) => `note-${(e.data as ProbeNote).note_id}`;
      const before = { ...counts };
      const outcomes = await appendMany(
        store,
        notes.map((e) => ({ streamId: streamOf(e), events: [e], expected: 'no_stream' as const })),
      );
      expect(outcomes.every((o) => o.ok && !o.result.noop)).toBe(true);
      expect(counts.sealing - before.sealing).toBe(1);
      for (const e of [notes[0], notes[199]]) {
        const [raw] = await env.log.readStream(streamOf(e));
        expect(JSON.stringify(raw.data)).not.toContain((e.data as ProbeNote).text as string);
        expect((await store.readStream(streamOf(e)))[0].data).toEqual(e.data);
      }

      const again = noteRecorded({ note_id: goneId, text: marker('after-erasure') });
      const fresh = noteRecorded({ text: marker('fresh') });
      const mixed = await appendMany(store, [
        { streamId: `note-${goneId}`, events: [again], expected: 0n },
        { streamId: streamOf(fresh), events: [fresh], expected: 'no_stream' },
      ]);
      expect(mixed[0].ok === false && mixed[0].error).toBeInstanceOf(SubjectErasedError);
      expect(mixed[1]).toMatchObject({ ok: true, result: { revision: 0n, noop: false } });
      expect(await env.log.readStream(`note-${goneId}`)).toHaveLength(1);
      expect((await store.readStream(streamOf(fresh)))[0].data).toEqual(fresh.data);
    });

    it('given events with no erasable field, then they are appended and read back as they are, with no key lookup', async () => {
      const before = { ...counts };
      const e = anEvent();
      const stream = `plain-${randomUUID()}`;
      await store.append(stream, [e], 'no_stream');
      const [read] = await store.readStream(stream);
      expect(read.data).toEqual(e.data);
      expect((await env.log.readStream(stream))[0].data).toEqual(e.data);
      expect(counts).toEqual(before);
    });

    it('when a note is erased, then its erasable fields read as null on every path, its other fields stay, and other notes are untouched', async () => {
      const head = await env.log.headPosition();
      const gone = noteRecorded({ text: marker('gone'), lines: [{ n: 1, body: marker('gone-body') }], meta: { author_email: 'a@example.com' } });
      const kept = noteRecorded({ text: marker('kept') });
      const goneId = (gone.data as ProbeNote).note_id;
      await store.append(`note-${goneId}`, [gone], 'no_stream');
      await store.append(`note-${(kept.data as ProbeNote).note_id}`, [kept], 'no_stream');
      await store.readStream(`note-${goneId}`);

      const erase = notesErased([goneId]);
      await store.append(`notes-erased-${randomUUID()}`, [erase], 'no_stream');

      const { all, typed } = await caughtUp(store, head, [gone.id, kept.id]);
      for (const events of typed ? [all, typed, await store.readStream(`note-${goneId}`)] : [all, await store.readStream(`note-${goneId}`)]) {
        expect(noteIn(events, gone.id)).toEqual({ note_id: goneId, title: 'a note', text: null, lines: [{ n: 1, body: null }], meta: null });
      }
      expect(noteIn(all, kept.id)).toEqual(kept.data);
      const key = await env.db('aivis_subject_keys').where('subject', `note-${goneId}`).first();
      expect(key).toMatchObject({ key: null, shredded_at: expect.any(Date) });
    });

    it('given a note erased through one instance, then the other instance reads it as null at once, although it had its key in cache', async () => {
      const note = noteRecorded({ text: marker('two-instances') });
      const id = (note.data as ProbeNote).note_id;
      await store.append(`note-${id}`, [note], 'no_stream');
      expect(((await other.readStream(`note-${id}`))[0].data as ProbeNote).text).toBe((note.data as ProbeNote).text);

      await store.append(`notes-erased-${randomUUID()}`, [notesErased([id])], 'no_stream');
      expect(((await other.readStream(`note-${id}`))[0].data as ProbeNote).text).toBeNull();
      // and the other instance does not seal new text for it with the key it had
      await expect(other.append(`note-${id}`, [noteRecorded({ note_id: id, text: 'again' })], 0n)).rejects.toBeInstanceOf(SubjectErasedError);
    });

    it('given a note sealed once (its key in cache), when more text of it is appended, then it is sealed with the same key: another instance opens both', async () => {
      const first = noteRecorded({ text: marker('first') });
      const id = (first.data as ProbeNote).note_id;
      await store.append(`note-${id}`, [first], 'no_stream');
      const second = noteRecorded({ note_id: id, text: marker('second') });
      await store.append(`note-${id}`, [second], 0n);
      expect((await other.readStream(`note-${id}`)).map((e) => (e.data as ProbeNote).text)).toEqual([
        (first.data as ProbeNote).text,
        (second.data as ProbeNote).text,
      ]);
    });

    it('given an erased note, when text of it is appended again, then the append is refused and nothing is written; a repeated erase changes nothing', async () => {
      const note = noteRecorded({ text: marker('later') });
      const id = (note.data as ProbeNote).note_id;
      await store.append(`note-${id}`, [note], 'no_stream');
      const erase = notesErased([id]);
      await store.append(`erase-${id}`, [erase], 'no_stream');

      const again = noteRecorded({ note_id: id, text: marker('after-erasure') });
      await expect(store.append(`note-${id}`, [again], 0n)).rejects.toThrow(new SubjectErasedError(`note-${id}`));
      expect(await env.log.readStream(`note-${id}`)).toHaveLength(1);

      const r = await store.append(`erase-${id}`, [erase], 'any');
      expect(r.noop).toBe(true);
      expect(((await store.readStream(`note-${id}`))[0].data as ProbeNote).text).toBeNull();
    });

    it("given a ciphertext copied into another subject's event, then it does not open there: the read fails loudly", async () => {
      const a = noteRecorded({ text: marker('moved') });
      await store.append(`note-${(a.data as ProbeNote).note_id}`, [a], 'no_stream');
      const [raw] = await env.log.readStream(`note-${(a.data as ProbeNote).note_id}`);
      const b = noteRecorded({ text: 'b' });
      const bId = (b.data as ProbeNote).note_id;
      await store.append(`note-${bId}`, [b], 'no_stream');
      const forged = { ...b, id: randomUUID(), data: { ...(b.data as ProbeNote), text: (raw.data as { text: unknown }).text } };
      await env.log.append(`note-${bId}`, [forged], 0n);
      await expect(store.readStream(`note-${bId}`)).rejects.toBeInstanceOf(MalformedEventError);
    });

    it('given an event in the log with a sealed value but no subject id, then reading it fails as a malformed event', async () => {
      const stream = `note-broken-${randomUUID()}`;
      const broken = noteRecorded({ text: 'x' });
      const [sealed] = await env.log.readStream(`note-${await appendNote()}`);
      await env.log.append(stream, [{ ...broken, data: { ...(sealed.data as object), note_id: undefined } }], 'no_stream');
      await expect(store.readStream(stream)).rejects.toBeInstanceOf(MalformedEventError);
    });

    it('given appends in order, then positions and revisions are those of the store underneath', async () => {
      const stream = `note-order-${randomUUID()}`;
      const a = await store.append(stream, [noteRecorded({ text: 'one' })], 'no_stream');
      const b = await store.append(stream, [anEvent()], a.revision);
      expect(b.revision).toBe(1n);
      expect(comparePositions(b.position, a.position)).toBeGreaterThan(0);
      expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0n, 1n]);
    });
  });
}
