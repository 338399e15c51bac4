import '../support/erasure-probe';
import { describe, it } from 'vitest';
import { openPostgres } from '../../src/db';
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
    // the second instance: a client of its own, and a pool of its own where the key table is on a server
    const log2 = await openEsdbEventStore(url);
    const db2 = d.url ? await openPostgres(d.url) : null;
    return {
      log,
      db: d.db,
      second: { log: log2, db: db2?.db ?? d.db },
      close: async () => (await log.close(), await log2.close(), await db2?.close(), await d.close()),
    };
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
