import { z } from 'zod';
import { ContentColumnType, contentSheetsStream, SHEET_NOT_FOUND } from '../../src/domain/content';
import { conflict, type DomainError, invalid, notFound } from '../../src/domain/errors';
import { type EventsOf, exhaustive, contentSheetsEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';
import { newId } from '../../src/domain/ids';
import { label, Uuid, WebsiteId } from '../../src/domain/schemas';
import { type Aggregate, type CommandContext, type Decision, handle } from '../handle';

export { contentSheetsStream } from '../../src/domain/content';

export interface ColumnState {
  column_id: string;
  name: string;
  type: ContentColumnType;
  options: string[];
}
export interface SheetState {
  sheet_id: string;
  name: string;
  type: 'sheet' | 'view';
  /** in creation order */
  columns: ColumnState[];
}

/** A website's tabs and their customer columns, stream `contentsheets-<website_id>`. */
export interface ContentSheetsState {
  sheets: Map<string, SheetState>;
}

/** A known sheet replaced by a copy with `change`d columns (an unknown sheet: nothing changes). */
function withColumns(s: ContentSheetsState, sheetId: string, change: (columns: ColumnState[]) => ColumnState[]): ContentSheetsState {
  const sheet = s.sheets.get(sheetId);
  if (sheet) s.sheets.set(sheet.sheet_id, { ...sheet, columns: change(sheet.columns) });
  return s;
}

export const CONTENT_SHEETS_EVENT_TYPES = typesOf(contentSheetsEvents);
export type ContentSheetsEvent = EventsOf<typeof CONTENT_SHEETS_EVENT_TYPES>;

function apply(s: ContentSheetsState, e: ContentSheetsEvent): ContentSheetsState {
  switch (e.type) {
    case 'ContentSheetCreated':
      s.sheets.set(e.data.sheet_id, { sheet_id: e.data.sheet_id, name: e.data.name, type: e.data.type, columns: [] });
      return s;
    case 'ContentColumnCreated': {
      const { column_id, name, type, options } = e.data;
      return withColumns(s, e.data.sheet_id, (columns) => [...columns, { column_id, name, type, options: [...options] }]);
    }
    case 'ContentColumnOptionsAdded': {
      const { column_id, options } = e.data;
      return withColumns(s, e.data.sheet_id, (columns) =>
        columns.map((c) => (c.column_id === column_id ? { ...c, options: [...c.options, ...options] } : c)),
      );
    }
    default:
      return exhaustive(e, s);
  }
}

const copy = (s: ContentSheetsState): ContentSheetsState => ({ sheets: new Map(s.sheets) });

export const ContentSheets: Aggregate<ContentSheetsState, ContentSheetsEvent> = {
  types: CONTENT_SHEETS_EVENT_TYPES,
  initial: () => ({ sheets: new Map() }),
  evolve: (s, e) => apply(copy(s), e),
  replay: { own: copy, apply },
};

export const MAX_OPTION_LABEL = 200;
const OptionLabel = label(MAX_OPTION_LABEL);

export const CreateSheet = z.strictObject({
  website_id: WebsiteId,
  name: label(200).describe('The tab name'),
  type: z.enum(['sheet', 'view'], { error: "must be 'sheet' or 'view'" }).default('sheet').describe("'sheet' (default) or 'view'"),
});
export type CreateSheet = z.infer<typeof CreateSheet>;

export const CreateColumn = z.strictObject({
  website_id: WebsiteId.optional(),
  name: label(200).describe('The column name'),
  type: ContentColumnType.describe('text, link, number, date, checkbox, multi_select or generated'),
  options: z.array(OptionLabel).max(50, 'must have at most 50 items').optional().describe('Options of a multi_select column'),
});
export type CreateColumn = z.infer<typeof CreateColumn>;
export const SheetIdParam = Uuid;

export const SHEET_NAME_TAKEN = 'A sheet with this name already exists';
export const COLUMN_NAME_TAKEN = 'A column with this name already exists in this sheet';

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function decideCreateSheet(s: ContentSheetsState, cmd: CreateSheet & { sheet_id: string }): Decision<{ sheet_id: string }> | DomainError {
  for (const sheet of s.sheets.values()) if (same(sheet.name, cmd.name)) return conflict(SHEET_NAME_TAKEN, { sheet_id: sheet.sheet_id });
  return {
    events: [{ type: 'ContentSheetCreated', data: { website_id: cmd.website_id, sheet_id: cmd.sheet_id, name: cmd.name, type: cmd.type } }],
    result: { sheet_id: cmd.sheet_id },
  };
}

/** Distinct labels, case-insensitively, first spelling kept. */
export function distinctLabels(labels: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const l of labels) {
    const k = l.toLowerCase();
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(l);
  }
  return out;
}

export function decideCreateColumn(
  s: ContentSheetsState,
  cmd: CreateColumn & { website_id: string; sheet_id: string; column_id: string },
): Decision<{ column_id: string }> | DomainError {
  const sheet = s.sheets.get(cmd.sheet_id);
  if (!sheet) return notFound(SHEET_NOT_FOUND);
  if (sheet.type === 'view') return invalid('sheet_id: a view has no columns of its own; add columns to a sheet');
  if (cmd.options?.length && cmd.type !== 'multi_select') return invalid('options: only a multi_select column has options');
  for (const c of sheet.columns) if (same(c.name, cmd.name)) return conflict(COLUMN_NAME_TAKEN, { column_id: c.column_id });
  return {
    events: [
      {
        type: 'ContentColumnCreated',
        data: {
          website_id: cmd.website_id,
          sheet_id: sheet.sheet_id,
          column_id: cmd.column_id,
          name: cmd.name,
          type: cmd.type,
          options: distinctLabels(cmd.options ?? []),
        },
      },
    ],
    result: { column_id: cmd.column_id },
  };
}

export const createSheet = (ctx: CommandContext, cmd: CreateSheet) =>
  handle(ctx, contentSheetsStream(cmd.website_id), ContentSheets, (s) => decideCreateSheet(s, { ...cmd, sheet_id: newId() }));

export const createColumn = (ctx: CommandContext, cmd: CreateColumn & { website_id: string; sheet_id: string }) =>
  handle(ctx, contentSheetsStream(cmd.website_id), ContentSheets, (s) => decideCreateColumn(s, { ...cmd, column_id: newId() }));
