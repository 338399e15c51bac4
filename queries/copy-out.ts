import type { Readable } from 'node:stream';
import type { Knex } from 'knex';
import { to as copyTo } from 'pg-copy-streams';

/** A pg connection as knex hands it out (`client.acquireConnection()`): COPY runs on it directly. */
export interface CopyConn {
  connection?: { stream?: { write?: unknown } };
  escapeLiteral(s: string): string;
  query(q: object | string): Readable | Promise<unknown>;
}

/** Whether the connection is a socket to a Postgres server (PGlite has no COPY stream: read with a SELECT there). */
export const copies = (conn: CopyConn): boolean => typeof conn.connection?.stream?.write === 'function';

/**
 * `COPY (...) TO STDOUT` on `conn`, announced to knex's query listeners as its own statements are ('query', then
 * 'query-response' when the stream ends): listeners that count or watch statements see this one.
 */
export function copyOut(db: Knex, conn: CopyConn, sql: string): Readable {
  const obj = { method: 'copy', sql, bindings: [] };
  db.client.emit('query', obj);
  const stream = conn.query(copyTo(sql)) as Readable;
  stream.once('end', () => db.client.emit('query-response', [], obj));
  return stream;
}
