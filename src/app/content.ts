import * as itemCommands from '../../commands/content/item-commands';
import { changeTitle, type UpdateContent } from '../../commands/content/item-commands';
import * as sheetsCommands from '../../commands/content/sheets';
import type { CreateColumn, CreateSheet } from '../../commands/content/sheets';
import * as trackCommands from '../../commands/content/track';
import type { TrackContent } from '../../commands/content/track';
import * as itemsQueries from '../../queries/content/items';
import {
  type ContentRow,
  contentHubUrl,
  contentRow,
  contentView,
  getSheet,
  liveContentIds,
  sheetNames,
  sheetOwner,
  sheetType,
} from '../../queries/content/items';
import type { WebsiteRow } from '../../queries/access';
import { z } from 'zod';
import * as listQueries from '../../queries/content/list';
import { resolveSelection } from '../../queries/filters';
import { CONTENT_NOT_FOUND, CONTENT_TYPES, ContentStage, type ContentType, GENERATED_TYPES, SHEET_NOT_FOUND } from '../domain/content';
import { SharedFilters, ToolSharedFilters } from '../domain/filters';
import { PageNum, PageSize, Uuid, WebsiteId } from '../domain/schemas';
import { DomainErrorException, invalid, notFound } from '../domain/errors';
import type { Need } from '../domain/principal';
import { type Caller, commandContextOf, dbOf, type Reads, flagStale, settled, websiteFor, writeThenRead, written } from './context';

/**
 * The content hub's operations (REST routes and MCP tools both call them): access, the command or query,
 * read-your-writes, the answer. Rules live in commands/content.
 */

/** What the content hub's operations need of the caller (an API key is an admin within its scope). */
export const CONTENT_VIEW: Need = { category: 'content', level: 'view' };
export const CONTENT_EDIT: Need = { category: 'content', level: 'edit' };

/** The read model every write of the area waits for before answering. */
export const CONTENT_READS: Reads = ['content'];

/**
 * The item a request addresses, and its website, if the caller may do `need` on it (CONTRACT.md, Content hub): the
 * content id decides the website; an unknown id, another organization's id, or a `website_id` sent that differs
 * answers 404 'Content not found'; a website outside the caller's scope, paused or deleted answers 403.
 */
export async function contentFor(
  c: Caller,
  contentId: string,
  websiteId: string | undefined,
  need: Need = CONTENT_VIEW,
): Promise<{ row: ContentRow; website: WebsiteRow }> {
  const row = await contentRow(dbOf(c), contentId);
  if (!row || row.organization_id !== c.principal.organizationId) throw new DomainErrorException(notFound(CONTENT_NOT_FOUND));
  if (websiteId !== undefined && websiteId.toLowerCase() !== row.website_id) throw new DomainErrorException(notFound(CONTENT_NOT_FOUND));
  const website = await websiteFor(c, row.website_id, need);
  return { row, website };
}

/** GET /api/v1/content/{id}: the item. */
export async function getContent(c: Caller, contentId: string, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_VIEW);
  return contentView(dbOf(c), row, c.deps.rt.config.publicBaseUrl);
}

/** The shared pool's name (rows tracked without a tab, or into a view-type tab). */
export const SHARED_POOL_NAME = 'All content';

/** POST /api/v1/content/track: the five rules of the spec, decided in commands/content/track.ts. */
export async function trackContent(c: Caller, input: TrackContent) {
  const w = await websiteFor(c, input.website_id, CONTENT_EDIT);
  const db = dbOf(c);
  const r = await written(
    c.deps,
    trackCommands.trackContent(
      commandContextOf(c, w.id),
      { ...input, website_id: w.id, website_url: w.url },
      { live: (ids) => liveContentIds(db, w.id, ids) },
    ),
    CONTENT_READS,
  );
  const sheetIds = [...new Set([...r.result.created, ...r.result.skipped].flatMap((x) => x.sheet_id ?? []))];
  const names = await sheetNames(db, sheetIds);
  const base = c.deps.rt.config.publicBaseUrl;
  const shape = <T extends { content_id: string; sheet_id: string | null }>(x: T) => ({
    ...x,
    destination_name: (x.sheet_id && names.get(x.sheet_id)) || SHARED_POOL_NAME,
    content_hub_url: contentHubUrl(base, x.content_id),
  });
  return {
    success: true,
    created_count: r.result.created.length,
    skipped_count: r.result.skipped.length,
    created: r.result.created.map(shape),
    skipped: r.result.skipped.map((x) => ({ ...shape(x), type: x.type })),
  };
}

/** PATCH /api/v1/content/{id}: the title; answers the item. */
export async function updateContent(c: Caller, contentId: string, input: UpdateContent) {
  const { row } = await contentFor(c, contentId, input.website_id, CONTENT_EDIT);
  return writeThenRead(
    c,
    changeTitle(commandContextOf(c, row.website_id), { content_id: row.content_id, title: input.title }),
    CONTENT_READS,
    async () => {
      const fresh = await contentRow(dbOf(c), row.content_id);
      return fresh && contentView(dbOf(c), fresh, c.deps.rt.config.publicBaseUrl);
    },
  );
}

/** DELETE /api/v1/content/{id}: physical; `{success: true}`. */
export async function deleteContent(c: Caller, contentId: string, websiteId?: string) {
  const { row } = await contentFor(c, contentId, websiteId, CONTENT_EDIT);
  return settled(c.deps, itemCommands.deleteContent(commandContextOf(c, row.website_id), { content_id: row.content_id }), CONTENT_READS);
}

// sheets and columns (extension)
export async function listSheets(c: Caller, websiteId: string) {
  const w = await websiteFor(c, websiteId, CONTENT_VIEW);
  return { sheets: await itemsQueries.listSheets(dbOf(c), w.id) };
}

export async function createSheet(c: Caller, input: CreateSheet) {
  const w = await websiteFor(c, input.website_id, CONTENT_EDIT);
  const sheet = await writeThenRead(c, sheetsCommands.createSheet(commandContextOf(c, w.id), { ...input, website_id: w.id }), CONTENT_READS, (r) =>
    getSheet(dbOf(c), w.id, r.sheet_id),
  );
  return { sheet };
}

/** The tab a request addresses: 404 'Sheet not found' for an unknown id, another organization's, or a differing website_id. */
async function sheetFor(c: Caller, sheetId: string, websiteId: string | undefined) {
  const s = await sheetOwner(dbOf(c), sheetId);
  if (!s || s.organization_id !== c.principal.organizationId || (websiteId !== undefined && websiteId.toLowerCase() !== s.website_id)) {
    throw new DomainErrorException(notFound(SHEET_NOT_FOUND));
  }
  return websiteFor(c, s.website_id, CONTENT_EDIT);
}

export async function createColumn(c: Caller, sheetId: string, input: CreateColumn) {
  const w = await sheetFor(c, sheetId, input.website_id);
  const column = await writeThenRead(
    c,
    sheetsCommands.createColumn(commandContextOf(c, w.id), { ...input, website_id: w.id, sheet_id: sheetId.toLowerCase() }),
    CONTENT_READS,
    async (r) => (await getSheet(dbOf(c), w.id, sheetId.toLowerCase()))?.columns.find((x) => x.column_id === r.column_id),
  );
  return { column };
}

// listing and citations
const ContentTypeFilter = z
  .enum([...CONTENT_TYPES, 'draft', 'generated_any'], { error: `must be one of ${[...CONTENT_TYPES, 'draft', 'generated_any'].join(', ')}` })
  .describe("A content type; 'draft' is an alias of 'generated', 'generated_any' the four generated types");
const Mentioned = z
  .boolean({ error: 'must be a boolean' })
  .describe('true: count only answers that mention the brand; false: only those that do not; omitted: every answer');

const listFields = (filters: typeof SharedFilters | typeof ToolSharedFilters) => ({
  website_id: WebsiteId,
  filters: filters.optional(),
  sheet_id: Uuid.optional().describe('Only the items of this tab (a view-type tab lists every item)'),
  content_type: ContentTypeFilter.optional(),
  stage: ContentStage.optional().describe('Only items at this pipeline stage'),
  mentioned: Mentioned.optional(),
  page_num: PageNum(),
  page_size: PageSize(),
});
export const ListContent = z.strictObject(listFields(SharedFilters));
export type ListContent = z.infer<typeof ListContent>;
/** The same for MCP tools: dates in filters also spelled out. */
export const ToolListContent = z.strictObject(listFields(ToolSharedFilters));

const promptsFields = (filters: typeof SharedFilters | typeof ToolSharedFilters) => ({
  website_id: WebsiteId,
  content_id: Uuid.describe('The content item'),
  filters: filters.optional(),
  mentioned: Mentioned.optional(),
});
export const ContentPromptsRequest = z.strictObject(promptsFields(SharedFilters));
export const ToolContentPromptsRequest = z.strictObject(promptsFields(ToolSharedFilters));
export type ContentPromptsRequest = z.infer<typeof ContentPromptsRequest>;

const typesOf = (t: ListContent['content_type']): readonly ContentType[] | undefined =>
  t === undefined ? undefined : t === 'draft' ? ['generated'] : t === 'generated_any' ? GENERATED_TYPES : [t];

/** POST /api/v1/content: a page of items with their citation figures over the answers the filters select. */
export async function listContent(c: Caller, input: ListContent, options: { withUrl?: boolean } = {}) {
  const w = await websiteFor(c, input.website_id, CONTENT_VIEW);
  const db = dbOf(c);
  let sheetId: string | undefined;
  if (input.sheet_id !== undefined) {
    const type = await sheetType(db, w.id, input.sheet_id);
    if (!type) throw new DomainErrorException(invalid('sheet_id: no tab of this website has this id'));
    if (type === 'sheet') sheetId = input.sheet_id.toLowerCase();
  }
  const selection = await resolveSelection(db, w.id, input.filters ?? {}, { prefix: 'filters' });
  return flagStale(
    c,
    w.id,
    ['content'],
    listQueries.listContent(
      db,
      w.id,
      { sheetId, types: typesOf(input.content_type), stage: input.stage, withUrl: options.withUrl },
      { selection, mentioned: input.mentioned },
      input,
    ),
  );
}

/** POST /api/v1/content/prompts: per prompt, the selected answers citing one item. */
export async function contentPrompts(c: Caller, input: ContentPromptsRequest) {
  const w = await websiteFor(c, input.website_id, CONTENT_VIEW);
  const { row } = await contentFor(c, input.content_id, w.id, CONTENT_VIEW);
  const selection = await resolveSelection(dbOf(c), w.id, input.filters ?? {}, { prefix: 'filters' });
  return listQueries.contentPrompts(dbOf(c), row, { selection, mentioned: input.mentioned });
}
