import type { Knex } from 'knex';
import { z } from 'zod';

/** A page of a listing: its number (from 0) and size. */
export interface PageRequest {
  page_num: number;
  page_size: number;
}

/** Reads the page's rows and one more, so that whether more follow is known without a count (see `pageInfo`). */
export function onePageAndMore<Q extends Knex.QueryBuilder>(q: Q, page: PageRequest): Q {
  return q.offset(page.page_num * page.page_size).limit(page.page_size + 1) as Q;
}

/** A page read with `onePageAndMore`: the rows to show (`pageInfo` says whether more follow). */
export function pageRows<R>(rows: R[], page: PageRequest): R[] {
  return rows.slice(0, page.page_size);
}

/** pageInfo's fields in a listing's answer schema. */
export const PageInfo = { page_num: z.number().int(), page_size: z.number().int(), has_more: z.boolean() };

/** The page's numbers as listings answer them: page_num, page_size, has_more. */
export function pageInfo(rows: unknown[], page: PageRequest): { page_num: number; page_size: number; has_more: boolean } {
  return { page_num: page.page_num, page_size: page.page_size, has_more: rows.length > page.page_size };
}

/** The rows of `table` that match `where`, oldest first (created_at, then id), as `view` shows them. */
export async function oldestFirst<T>(db: Knex, table: string, where: Record<string, string>, view: (r: any) => T): Promise<T[]> {
  const rows = await db(table)
    .where(where)
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map((r) => view(r));
}

/** Newest first by a time column, ties broken by an id column (a stable order for paging). */
export const newestFirst = (time: string, id: string) => [
  { column: time, order: 'desc' as const },
  { column: id, order: 'desc' as const },
];
