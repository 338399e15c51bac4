import '../support/erasure-probe';
import { describe, it } from 'vitest';
import { openEsdbEventStore } from '../../src/eventstore/esdb';
import { openSubjectKeyring } from '../../src/eventstore/keyring';
import { Sealer, sealEventStore } from '../../src/eventstore/sealed';
import { freshDatabase } from '../support/db';
import { eventStoreContract } from './contract';
import { sealingContract } from './sealed-contract';

// EventStoreDB through the same sealing layer: the log keeps only ciphertext, the keys live in Postgres (or PGlite)
const url = process.env.EVENTSTORE_URL;
if (url) {
  sealingContract('sealing over EventStoreDB', async () => {
    const d = await freshDatabase();
    const log = await openEsdbEventStore(url);
    return { log, db: d.db, close: async () => (await log.close(), await d.close()) };
  });
  eventStoreContract('sealed EventStoreDB event store', async () => {
    const d = await freshDatabase();
    const store = sealEventStore(await openEsdbEventStore(url), new Sealer(await openSubjectKeyring(d.db)));
    return { ...store, close: async () => (await store.close(), await d.close()) };
  });
} else {
  console.log('sealing over EventStoreDB skipped: EVENTSTORE_URL unset');
  describe.skip('sealing over EventStoreDB', () => {
    it.skip('sealing and event store contracts (needs EVENTSTORE_URL)', () => {});
  });
}
