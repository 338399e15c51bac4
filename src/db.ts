import knex, { type Knex } from 'knex';
import pg from 'pg';

// bigint counts come back as strings by default; 64-bit ids stay strings, counts are parsed where read.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => v);
// a calendar day stays the string YYYY-MM-DD (the default parser makes a local-time Date of it)
pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

export interface Database {
  db: Knex;
  kind: 'postgres' | 'pglite';
  /** LISTEN on a channel; the callback gets each NOTIFY payload after its transaction commits */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/**
 * One dedicated connection that LISTENs on every channel asked for, and reconnects (and listens again) after a
 * failure: an instance listens on several channels, and each backend started costs Postgres its cold catalog caches.
 * It opens with the first channel and ends when the last listener stops.
 */
function pgListener(url: string): Database['listen'] {
  const channels = new Map<string, Set<(payload: string) => void>>();
  let client: pg.Client | null = null;
  let opening: Promise<pg.Client> | null = null;
  let retry: NodeJS.Timeout | null = null;
  /** moves on when the last listener stops: a connection still opening then is ended, not kept */
  let generation = 0;
  /** the channels each connection listens on */
  const listening = new WeakMap<pg.Client, Set<string>>();
  const listenOn = async (c: pg.Client, channel: string) => {
    const on = listening.get(c) ?? new Set<string>();
    listening.set(c, on);
    if (on.has(channel)) return;
    on.add(channel);
    await c.query(`listen ${pg.escapeIdentifier(channel)}`);
  };
  const reconnect = () => {
    retry = setTimeout(() => {
      retry = null;
      if (channels.size) open().catch(reconnect);
    }, 1000);
  };
  const open = (): Promise<pg.Client> => {
    opening ??= (async () => {
      const at = generation;
      const c = new pg.Client({ connectionString: url });
      c.on('notification', (n) => {
        for (const cb of channels.get(n.channel) ?? []) cb(n.payload ?? '');
      });
      c.on('error', () => {
        if (client !== c) return;
        client = opening = null;
        void c.end().catch(() => undefined);
        reconnect();
      });
      try {
        await c.connect();
        // every channel asked for so far, those added while this connected too
        for (const channel of channels.keys()) await listenOn(c, channel);
        if (at !== generation) throw new Error('every listener stopped while the connection opened');
      } catch (err) {
        if (at === generation) opening = null;
        void c.end().catch(() => undefined);
        throw err;
      }
      client = c;
      return c;
    })();
    return opening;
  };
  const stop = async (channel: string, set: Set<(payload: string) => void>) => {
    if (set.size || channels.get(channel) !== set) return;
    channels.delete(channel);
    if (channels.size) {
      if (client) listening.get(client)?.delete(channel);
      await client?.query(`unlisten ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
      return;
    }
    if (retry) clearTimeout(retry);
    generation++;
    const c = client;
    client = opening = null;
    await c?.end().catch(() => undefined);
  };
  return async (channel, onPayload) => {
    let set = channels.get(channel);
    const added = !set;
    if (!set) channels.set(channel, (set = new Set()));
    try {
      const c = await open();
      // a connection that was already open when the channel was added is told here
      if (added && c === client) await listenOn(c, channel);
    } catch (err) {
      await stop(channel, set);
      throw err;
    }
    set.add(onPayload);
    return async () => {
      set.delete(onPayload);
      await stop(channel, set);
    };
  };
}

export async function openPostgres(url: string, poolMax = 10): Promise<Database> {
  const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: poolMax } });
  await db.raw('select 1');
  return { db, kind: 'postgres', listen: pgListener(url), close: () => db.destroy() };
}

/** Channels an embedded database LISTENs on (at open: see openPglite). */
const PGLITE_CHANNELS = ['aivis_keys', 'aivis_events', 'aivis_team', 'aivis_grants'];

/**
 * Embedded Postgres (PGlite) in dataDir, or in memory with 'memory://'. One connection: never query db inside a trx.
 * LISTEN runs once at open, before knex uses the connection: a LISTEN issued later through PGlite's own API can
 * land between the protocol messages of a knex query on the same session and leave that query waiting forever.
 * `image`: a new data directory's contents to start from (another's `dumpDataDir()`), instead of running initdb.
 */
export async function openPglite(dataDir: string, image?: Blob): Promise<Database> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const lite = new PGlite(dataDir, image ? { loadDataDir: image } : {});
  await lite.waitReady;
  const callbacks = new Map<string, Set<(payload: string) => void>>(PGLITE_CHANNELS.map((c) => [c, new Set()]));
  for (const channel of PGLITE_CHANNELS)
    await lite.listen(channel, (payload) => {
      for (const cb of callbacks.get(channel)!) cb(payload);
    });
  // knex deep-clones a plain connection object, which would break PGlite's connection: give it a factory
  const db = knex({ client: 'pg', connection: () => createPgConfig(lite) as never, pool: { min: 1, max: 1 } });
  await db.raw('select 1');
  return {
    db,
    kind: 'pglite',
    listen: async (channel, onPayload) => {
      const set = callbacks.get(channel);
      if (!set) throw new Error(`embedded database: channel ${channel} is not listened on (add it to PGLITE_CHANNELS)`);
      set.add(onPayload);
      return async () => {
        set.delete(onPayload);
      };
    },
    close: async () => {
      await db.destroy();
      await lite.close();
    },
  };
}

/**
 * SQL that compresses these columns' large values with lz4 where the server has it (Debian's Postgres does; PGlite
 * does not and keeps the default pglz): lz4 costs a fraction of pglz's CPU for answer texts on every insert.
 * Applies to values written from then on.
 */
export function preferLz4Sql(table: string, columns: readonly string[]): string {
  const alters = columns.map((c) => `alter table ${table} alter column ${c} set compression lz4;`).join(' ');
  const names = columns.map((c) => `'${c}'`).join(', ');
  // only when a column is not lz4 yet: the alter takes the table's exclusive lock, and this runs at every start
  return `do $lz4$ begin
    if exists (select 1 from pg_attribute where attrelid = '${table}'::regclass and attname in (${names}) and attcompression <> 'l') then ${alters} end if;
  exception when feature_not_supported then null; end $lz4$;`;
}

/**
 * `fn` on one of `db`'s connections (a transaction's own, or one of the pool's for the call), given back after: for what
 * knex's query builder cannot send (a named statement, a COPY).
 */
export async function onConnection<C, T>(db: Knex | Knex.Transaction, fn: (conn: C) => Promise<T>): Promise<T> {
  const conn = (await db.client.acquireConnection()) as C;
  try {
    return await fn(conn);
  } finally {
    // a transaction's client hands out its own connection and takes nothing back
    await db.client.releaseConnection(conn);
  }
}

/**
 * Runs `text` (placeholders `$1`, `$2`, …) as the named statement `name` on `db`'s connection: a transaction's own, or
 * one of the pool's for this call. Each connection then parses it once, and once five runs have planned alike it keeps
 * one generic plan instead of planning again every call: for the statements sent at every batch of the log (a
 * checkpoint move, a read of a stream, a read model's batch write), the planning cost more of the server's CPU than
 * the execution. Only for a text that is the same at every call (its name stands for it on every connection), and
 * where any plan of it reads the same rows (the parameters are arrays or JSON documents, not what the planner costs).
 */
export function prepared<R = Record<string, unknown>>(
  db: Knex | Knex.Transaction,
  name: string,
  text: string,
  values: readonly unknown[],
): Promise<R[]> {
  type Conn = {
    __knexUid?: string;
    __knexTxId?: string;
    query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
  };
  return onConnection(db, async (conn: Conn) => {
    // told to the knex instance's (and the transaction's) query listeners as its own statements are
    db.client.emit('query', { __knexUid: conn.__knexUid, __knexTxId: conn.__knexTxId, method: 'raw', sql: text, bindings: values });
    return (await conn.query({ name, text, values: values as unknown[] })).rows;
  });
}
