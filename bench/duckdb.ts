import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';

/** An in-memory DuckDB for a comparison: `use` loads and queries it through one connection; both are closed after. */
export async function withDuckDb<T>(use: (con: DuckDBConnection) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  try {
    return await use(con);
  } finally {
    con.closeSync();
    instance.closeSync();
  }
}
