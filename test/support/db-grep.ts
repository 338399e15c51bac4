import type { Knex } from 'knex';
import { expect } from 'vitest';

/**
 * Where a string occurs in the database: every column of every table of every schema (the event log included), as
 * text and as bytes; `table.column` for each hit. Unless `checkColumns` is false, it also checks it saw the schema
 * (more than 20 columns).
 */
export async function grepDatabase(db: Knex, needle: string, { checkColumns = true } = {}): Promise<string[]> {
  const columns = (
    await db.raw(
      // the catalog itself (information_schema's views took about 70 ms a call); the tables information_schema calls
      // BASE TABLE: no temporary (pg_temp_N) or TOAST table
      `select n.nspname as table_schema, c.relname as table_name, a.attname as column_name, format_type(a.atttypid, null) as data_type
         from pg_attribute a
         join pg_class c on c.oid = a.attrelid
         join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
          and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_(toast|temp)'`,
    )
  ).rows as { table_schema: string; table_name: string; column_name: string; data_type: string }[];
  if (checkColumns) expect(columns.length).toBeGreaterThan(20);
  const q = (x: string) => `"${x.replace(/"/g, '""')}"`;
  const tables = new Map<string, typeof columns>();
  for (const c of columns) {
    const key = `${q(c.table_schema)}.${q(c.table_name)}`;
    tables.set(key, [...(tables.get(key) ?? []), c]);
  }
  const hits: string[] = [];
  // one scan a table: a count per column
  for (const [table, cols] of tables) {
    const tests = cols.map((c) =>
      c.data_type === 'bytea' ? `position(convert_to(?, 'UTF8') in ${q(c.column_name)}) > 0` : `position(? in ${q(c.column_name)}::text) > 0`,
    );
    const select = tests.map((t, i) => `count(*) filter (where ${t})::int as c${i}`).join(', ');
    const row = (
      await db.raw(
        `select ${select} from ${table}`,
        tests.map(() => needle),
      )
    ).rows[0] as Record<string, number>;
    cols.forEach((c, i) => {
      if (row[`c${i}`] > 0) hits.push(`${c.table_name}.${c.column_name}`);
    });
  }
  return hits;
}
