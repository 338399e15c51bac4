import knex, { type Knex } from 'knex';

/**
 * A rebuild writes a read model beside the live one, in a schema of its own whose tables have the live tables' names,
 * and swaps them in at the end in one transaction: the live tables serve until then, and a rebuild that fails leaves
 * them as they were. The projection's own SQL is unchanged: unqualified names resolve through the search path.
 */
export const shadowSchema = (projection: string) => `aivis_rebuild_${projection.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);

const ident = (x: string) => `"${x.replace(/"/g, '""')}"`;

/** Makes unqualified names of this transaction resolve in `schemas`, in order (until it ends). */
export async function setSearchPath(trx: Knex.Transaction, schemas: readonly string[]): Promise<void> {
  await trx.raw(`select set_config('search_path', ?, true)`, [schemas.map(ident).join(', ')]);
}

/** Runs work with a Knex whose unqualified names resolve in one schema alone (a projection's migrate and rebuild hooks). */
export interface SchemaSession {
  run(fn: (k: Knex) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/**
 * A session in `schema`: on a server, a small pool of its own, so what fn runs side by side (index builds) still does;
 * on the one in-process connection of PGlite, a transaction per run.
 */
export function inSchema(db: Knex, schema: string): SchemaSession {
  if (typeof db.client.config.connection !== 'function') {
    const scoped = knex({ ...db.client.config, searchPath: [schema], pool: { min: 0, max: 4 } });
    return { run: (fn) => fn(scoped), close: () => scoped.destroy() };
  }
  return {
    run: (fn) =>
      db.transaction(async (trx) => {
        await setSearchPath(trx, [schema]);
        await fn(trx);
      }),
    close: async () => undefined,
  };
}

interface SequenceRow {
  name: string;
  owned: boolean;
  twin: boolean;
}

/** The schema the live tables are in: the first of the connection's search path (public by default). */
export async function liveSchema(db: Knex): Promise<string> {
  return (await db.raw('select current_schema() as s')).rows[0].s;
}

/** The sequences of a schema: owned by one of its columns (a serial) or not, and whether the live schema has one of that name. */
async function sequences(db: Knex, schema: string, live: string): Promise<SequenceRow[]> {
  const r = await db.raw(
    `select c.relname as name,
            exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass and d.objid = c.oid and d.deptype in ('a', 'i')) as owned,
            to_regclass(format('%I.%I', ?::text, c.relname)) is not null as twin
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ? and c.relkind = 'S'`,
    [live, schema],
  );
  return r.rows;
}

/**
 * Before the shadow is written: a sequence of its own that the live schema also has (a version counter shared by the
 * read model's rows) is dropped, so the shadow's writes draw from the live one and numbers keep growing across the
 * swap; a serial goes on from where the live one is.
 */
export async function shareSequences(db: Knex, schema: string, live: string): Promise<void> {
  for (const s of await sequences(db, schema, live)) {
    if (!s.twin) continue;
    if (!s.owned) {
      await db.raw(`drop sequence ${ident(schema)}.${ident(s.name)}`);
      continue;
    }
    const r = await db.raw(`select last_value, is_called from ${ident(live)}.${ident(s.name)}`);
    const { last_value, is_called } = r.rows[0];
    await db.raw('select setval(?::regclass, ?, ?)', [`${ident(schema)}.${ident(s.name)}`, last_value, is_called]);
  }
}

/** Takes the live tables (those that exist) for the swap: waits for their readers and for a live batch writing them. */
export async function lockLive(trx: Knex.Transaction, live: string, tables: readonly string[]): Promise<void> {
  const present: string[] = [];
  for (const t of tables)
    if ((await trx.raw('select to_regclass(?) is not null as has', [`${ident(live)}.${ident(t)}`])).rows[0].has) present.push(t);
  if (present.length) await trx.raw(`lock table ${present.map((t) => `${ident(live)}.${ident(t)}`).join(', ')} in access exclusive mode`);
}

/** Replaces the live tables by the shadow's (indexes and serials move with them), in the caller's transaction. */
export async function swapIn(trx: Knex.Transaction, schema: string, live: string, tables: readonly string[]): Promise<void> {
  for (const t of tables) await trx.raw(`drop table if exists ${ident(live)}.${ident(t)} cascade`);
  for (const t of tables) await trx.raw(`alter table if exists ${ident(schema)}.${ident(t)} set schema ${ident(live)}`);
  for (const s of await sequences(trx, schema, live)) {
    if (!s.owned && !s.twin) await trx.raw(`alter sequence ${ident(schema)}.${ident(s.name)} set schema ${ident(live)}`);
  }
}

export async function dropSchema(db: Knex, schema: string): Promise<void> {
  await db.raw(`drop schema if exists ${ident(schema)} cascade`);
}
