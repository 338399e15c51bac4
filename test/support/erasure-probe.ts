import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import { catalogue, erases, sealed, subject } from '../../src/domain/events';
import type { NewEvent, TypedEvent } from '../../src/eventstore/port';
import type { Projection } from '../../src/eventstore/projection';
import { testMetadata } from './events';

/**
 * Probe events for the erasure mechanism, which no area uses yet: a note whose text (and its lines' bodies) a user
 * can erase, and the delete that erases notes. The catalogue is the one list of event types, so importing this module adds
 * them to it for the rest of the worker process (test files share workers: later files see them too); import it before
 * anything that reads the catalogue.
 */
export const probeEvents = {
  ProbeNoteRecorded: z.object({
    note_id: subject('note'),
    /** not erasable: stays plain in the log */
    title: z.string(),
    text: sealed(z.string()),
    lines: z.array(z.object({ n: z.number().int(), body: sealed(z.string()) })),
    /** any JSON value can be sealed */
    meta: sealed(z.object({ author_email: z.string() })).optional(),
  }),
  ProbeNotesErased: z.object({ note_ids: z.array(erases('note')) }),
};
Object.assign(catalogue, probeEvents);

export type ProbeNote = z.infer<typeof probeEvents.ProbeNoteRecorded>;

export const noteRecorded = (note: Partial<ProbeNote> & { text: string }, meta = testMetadata()): NewEvent => ({
  id: randomUUID(),
  type: 'ProbeNoteRecorded',
  data: { note_id: randomUUID(), title: 'a note', lines: [], ...note },
  metadata: meta,
});

export const notesErased = (noteIds: string[], meta = testMetadata()): NewEvent => ({
  id: randomUUID(),
  type: 'ProbeNotesErased',
  data: { note_ids: noteIds },
  metadata: meta,
});

/** A read model of the notes: the text and line bodies as the projection received them; a delete drops the rows. */
export const probeNotesProjection: Projection = {
  name: 'probe-notes',
  version: 1,
  tables: ['rm_probe_notes'],
  async migrate(db: Knex) {
    await db.raw(
      `create table if not exists rm_probe_notes (note_id text primary key, title text not null, text text, lines jsonb not null, meta jsonb)`,
    );
  },
  handles: ['ProbeNoteRecorded', 'ProbeNotesErased'] as never,
  async apply(trx, events: TypedEvent[]) {
    for (const e of events as unknown as { type: string; data: Record<string, unknown> }[]) {
      if (e.type === 'ProbeNoteRecorded') {
        const d = e.data as ProbeNote;
        // an erased note (text null) arrives on a rebuild: nothing of it is kept
        if (d.text === null) continue;
        await trx('rm_probe_notes')
          .insert({
            note_id: d.note_id,
            title: d.title,
            text: d.text,
            lines: JSON.stringify(d.lines),
            meta: d.meta === undefined ? null : JSON.stringify(d.meta),
          })
          .onConflict('note_id')
          .ignore();
      } else {
        await trx('rm_probe_notes')
          .whereIn('note_id', (e.data as { note_ids: string[] }).note_ids)
          .delete();
      }
    }
  },
};
