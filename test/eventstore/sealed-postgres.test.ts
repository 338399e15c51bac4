import '../support/erasure-probe';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db';
import { MasterKeyMismatchError, openSubjectKeyring } from '../../src/eventstore/keyring';
import { openPostgresEventStore } from '../../src/eventstore/postgres';
import { Sealer, sealEventStore } from '../../src/eventstore/sealed';
import { freshDatabase, freshStore, onRealPostgres, type TestDatabase } from '../support/db';
import { eventStoreContract } from './contract';
import { sealingContract } from './sealed-contract';

const where = onRealPostgres ? 'real server' : 'PGlite';

sealingContract(`sealing over the Postgres event store (${where})`, async () => {
  const s = await freshStore();
  if (!s.url) return { log: s.store, db: s.db, close: () => s.close() };
  // on a server, the second instance has a pool of its own
  const second = await openPostgres(s.url);
  return {
    log: s.store,
    db: s.db,
    second: { log: await openPostgresEventStore(second.db), db: second.db },
    close: async () => (await second.close(), await s.close()),
  };
});

// the sealing store is an event store like any other
let t: TestDatabase | null = null;
eventStoreContract(`sealed Postgres event store (${where})`, async () => {
  const s = await freshStore();
  t = s;
  const store = sealEventStore(s.store, new Sealer(await openSubjectKeyring(s.db)));
  return { ...store, close: async () => (await store.close(), await t?.close()) };
});

describe('the master key that wraps subject keys', () => {
  it('given subject keys wrapped with one master key, when the keyring opens with another, then it refuses to start; a table with no live key adopts the new one', async () => {
    const d = await freshDatabase();
    try {
      const first = randomBytes(32);
      const k = await openSubjectKeyring(d.db, { masterKey: first });
      await k.forSealing(['note-1']);
      await expect(openSubjectKeyring(d.db, { masterKey: randomBytes(32) })).rejects.toBeInstanceOf(MasterKeyMismatchError);
      expect((await (await openSubjectKeyring(d.db, { masterKey: first })).forOpening(['note-1'])).get('note-1')).toBeTruthy();

      await k.shred(['note-1']);
      const second = randomBytes(32);
      const adopted = await openSubjectKeyring(d.db, { masterKey: second });
      expect((await adopted.forSealing(['note-2'])).get('note-2')).toBeTruthy();
      await expect(openSubjectKeyring(d.db, { masterKey: first })).rejects.toBeInstanceOf(MasterKeyMismatchError);
    } finally {
      await d.close();
    }
  });

  it('given a stored key, then the table holds it wrapped: not the key the data is sealed with', async () => {
    const d = await freshDatabase();
    try {
      const k = await openSubjectKeyring(d.db);
      const key = (await k.forSealing(['note-x'])).get('note-x')!;
      const row = await d.db('aivis_subject_keys').where('subject', 'note-x').first('key');
      expect(Buffer.from(row.key).includes(key.export())).toBe(false);
      expect(Buffer.from(row.key)).toHaveLength(61);
    } finally {
      await d.close();
    }
  });
});
