import type { Knex } from 'knex';
import type { ContentFieldValue, ContentStage, ContentType, PipelineStatus } from '../../src/domain/content';
import type { ColumnView, ContentItemView, SheetView } from './views';
import { iso, isoOrNull } from '../timestamps';

/** A row of rm_content with its website's organization (what access decides on). */
export interface ContentRow {
  content_id: string;
  organization_id: string;
  website_id: string;
  title: string;
  url: string | null;
  normalized_url: string | null;
  type: ContentType;
  sheet_id: string | null;
  topic_id: string | null;
  stage: ContentStage | null;
  pipeline_status: PipelineStatus | null;
  /** why the generation failed (JobFailed's message, in the same row as the failed status) */
  pipeline_error: string | null;
  brief: string | null;
  body: string | null;
  meta_description: string | null;
  cited_urls: string[];
  internal_links: string[];
  fields: Record<string, ContentFieldValue>;
  version_number: number;
  mark_as_done_time: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The item's row, or undefined (never created, or deleted). */
export async function contentRow(db: Knex, contentId: string): Promise<ContentRow | undefined> {
  return (await db('rm_content').where('content_id', contentId).first()) as ContentRow | undefined;
}

export const contentHubUrl = (baseUrl: string, contentId: string) => `${baseUrl}/api/v1/content/${contentId}`;

/** The item as the API shows it (CONTRACT's content item): its sheet's and topic's names, its fields by column. */
export async function contentView(db: Knex, row: ContentRow, baseUrl: string): Promise<ContentItemView> {
  const [sheet, topic, columns] = await Promise.all([
    row.sheet_id ? db('rm_content_sheets').where('sheet_id', row.sheet_id).first('name') : undefined,
    row.topic_id ? db('rm_topics').where('id', row.topic_id).first('name') : undefined,
    Object.keys(row.fields).length ? db('rm_content_columns').whereIn('column_id', Object.keys(row.fields)).select('column_id', 'name', 'type') : [],
  ]);
  const byId = new Map((columns as { column_id: string; name: string; type: ColumnView['type'] }[]).map((c) => [c.column_id, c]));
  return {
    content_id: row.content_id,
    website_id: row.website_id,
    title: row.title,
    url: row.url,
    normalized_url: row.normalized_url,
    type: row.type,
    sheet_id: row.sheet_id,
    sheet_name: (sheet?.name as string | undefined) ?? null,
    topic_id: row.topic_id,
    topic_name: (topic?.name as string | undefined) ?? null,
    stage: row.stage,
    status: row.stage,
    pipeline_status: row.pipeline_status,
    brief: row.brief,
    body: row.body,
    meta_description: row.meta_description,
    cited_urls: row.cited_urls,
    internal_links: row.internal_links,
    fields: Object.entries(row.fields).flatMap(([column_id, value]) => {
      const c = byId.get(column_id);
      return c ? [{ column_id, column: c.name, type: c.type, value }] : [];
    }),
    version_number: row.version_number,
    mark_as_done_time: isoOrNull(row.mark_as_done_time),
    content_hub_url: contentHubUrl(baseUrl, row.content_id),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

/** The website's tabs with their columns, oldest first (or the one tab `sheetId`). */
export async function listSheets(db: Knex, websiteId: string, sheetId?: string): Promise<SheetView[]> {
  const one = <Q extends Knex.QueryBuilder>(q: Q): Q => (sheetId === undefined ? q : (q.where('sheet_id', sheetId) as Q));
  const [sheets, columns] = await Promise.all([
    one(db('rm_content_sheets').where('website_id', websiteId))
      .orderBy([{ column: 'created_at' }, { column: 'sheet_id' }])
      .select('sheet_id', 'name', 'type'),
    one(db('rm_content_columns').where('website_id', websiteId))
      .orderBy([{ column: 'created_at' }, { column: 'column_id' }])
      .select('column_id', 'sheet_id', 'name', 'type', 'options'),
  ]);
  const bySheet = new Map<string, ColumnView[]>();
  for (const c of columns as (ColumnView & { sheet_id: string })[]) {
    const list = bySheet.get(c.sheet_id) ?? [];
    list.push({ column_id: c.column_id, name: c.name, type: c.type, options: c.options });
    bySheet.set(c.sheet_id, list);
  }
  return (sheets as Omit<SheetView, 'columns'>[]).map((s) => ({ ...s, columns: bySheet.get(s.sheet_id) ?? [] }));
}

export async function getSheet(db: Knex, websiteId: string, sheetId: string): Promise<SheetView | undefined> {
  return (await listSheets(db, websiteId, sheetId))[0];
}

/** A tab of the website: its type, or undefined for an id no tab of the website has. */
export async function sheetType(db: Knex, websiteId: string, sheetId: string): Promise<SheetView['type'] | undefined> {
  const sheet = await db('rm_content_sheets').where({ website_id: websiteId, sheet_id: sheetId }).first('type');
  return sheet?.type;
}

/** Where a tab addressed by id alone lives: its website and that website's organization. */
export async function sheetOwner(db: Knex, sheetId: string): Promise<{ website_id: string; organization_id: string } | undefined> {
  return db('rm_content_sheets as s')
    .join('rm_websites as w', 'w.id', 's.website_id')
    .where('s.sheet_id', sheetId)
    .first('s.website_id', 'w.organization_id');
}

/** The ids among `ids` that are live items of the website. */
export async function liveContentIds(db: Knex, websiteId: string, ids: string[]): Promise<Set<string>> {
  if (!ids.length) return new Set();
  const rows = await db('rm_content').where('website_id', websiteId).whereIn('content_id', ids).select('content_id');
  return new Set((rows as { content_id: string }[]).map((r) => r.content_id));
}

/** Tab names by id. */
export async function sheetNames(db: Knex, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = (await db('rm_content_sheets').whereIn('sheet_id', ids).select('sheet_id', 'name')) as { sheet_id: string; name: string }[];
  return new Map(rows.map((r) => [r.sheet_id, r.name]));
}
