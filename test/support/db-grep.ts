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
      `select c.table_schema, c.table_name, c.column_name, c.data_type
         from information_schema.columns c
         join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        where t.table_type = 'BASE TABLE' and c.table_schema not in ('pg_catalog', 'information_schema')`,
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
