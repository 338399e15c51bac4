import { freshStore, onRealPostgres, type TestDatabase } from '../support/db';
import { eventStoreContract } from './contract';

let t: TestDatabase | null = null;
eventStoreContract(onRealPostgres ? 'Postgres event store (real server)' : 'Postgres event store (PGlite)', async () => {
  const s = await freshStore();
  t = s;
  const close = s.store.close;
  return { ...s.store, close: async () => (await close(), await t?.close()) };
});
