import { Readable } from 'node:stream';
import {
  copyNdjson,
  decodeCursor,
  encodeCursor,
  type ExportCursor,
  exportAnswers,
  exportNdjson,
  planExport,
  START,
} from '../../queries/evidence/export';
import * as evidenceQueries from '../../queries/evidence/reads';
import type { SearchQueriesRequest, SourcesRequest } from '../../queries/evidence/reads';
import type { PageRequest } from '../../queries/paging';
import type { Answer } from '../../queries/responses/views';
import type { Need } from '../domain/principal';
import { type Caller, dbOf, websiteFor } from './context';
import { badRequest } from './problem';

/** Answer evidence (CONTRACT.md, Answer evidence): what the engines read, cited and searched, and the answers export. */
const VIEW: Need = { category: 'analytics', level: 'view' };

export const MALFORMED_CURSOR = 'after: must be a cursor from x-next-cursor';

export async function getSources(c: Caller, input: Omit<SourcesRequest, 'websiteId'> & { website_id: string }, page: PageRequest) {
  const w = await websiteFor(c, input.website_id, VIEW);
  return evidenceQueries.sources(dbOf(c), { ...input, websiteId: w.id }, page);
}

export async function getSearchQueries(c: Caller, input: Omit<SearchQueriesRequest, 'websiteId'> & { website_id: string }) {
  const w = await websiteFor(c, input.website_id, VIEW);
  return evidenceQueries.searchQueries(dbOf(c), { ...input, websiteId: w.id });
}

/** The cursor as sent, checked before anything is read. */
export function parseCursor(after: string | undefined): ExportCursor {
  if (after === undefined) return START;
  const c = decodeCursor(after);
  if (!c) throw badRequest(MALFORMED_CURSOR);
  return c;
}

/** At most `limit` answers after the cursor, in the export's order, and the cursor after them. */
export async function exportResponses(
  c: Caller,
  websiteId: string,
  after: ExportCursor,
  limit: number,
): Promise<{ next: string; answers: () => AsyncGenerator<Answer>; ndjson: () => Promise<Readable> }> {
  const w = await websiteFor(c, websiteId, VIEW);
  const db = dbOf(c);
  const plan = await planExport(db, w.id, after, limit);
  // COPY where the database is a Postgres server, pages of rows otherwise (PGlite)
  const ndjson = async () => (await copyNdjson(db, w.id, plan)) ?? Readable.from(exportNdjson(db, w.id, plan), { objectMode: false });
  return { next: encodeCursor(plan.next), answers: () => exportAnswers(db, w.id, plan), ndjson };
}
