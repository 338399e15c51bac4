import { z } from 'zod';
import type { ContentFieldValue } from '../../src/domain/content';
import { parseFilterDate } from '../../src/domain/dates';
import { text, textProblem } from '../../src/domain/schemas';
import type { ColumnState, SheetState } from './sheets';

/** Labels per multi-select value (spec, Limits: content track). */
export const MAX_LABELS = 50;
/** Characters of a text value and of a label. */
export const MAX_TEXT_VALUE = 10_000;
export const MAX_LABEL = 200;

/** A `fields` entry of a tracked row (spec, tracking rule 5): a customer column of the destination tab and its value. */
export const FieldEntry = z.strictObject({
  column: text().describe('A customer column of the destination tab, matched case-insensitively'),
  value: z
    .union([text(), z.number(), z.boolean(), z.array(text())], {
      error: 'must be a string, a number, a boolean or an array of option labels',
    })
    .describe(
      'text: string; link: http(s) URL; number; date: ISO 8601 (date-only = UTC midnight); checkbox: boolean; multi_select: array of up to 50 option labels',
    ),
});
export type FieldEntry = z.infer<typeof FieldEntry>;

/** A value of a field, checked against its column: the stored value, or the reason it does not fit. */
type Checked = { ok: true; value: ContentFieldValue; newOptions: string[] } | { ok: false; error: string };

const bad = (error: string): Checked => ({ ok: false, error });

function checkText(v: unknown, max: number): string | null {
  if (typeof v !== 'string') return 'must be a string';
  const p = textProblem(v);
  if (p) return p;
  if (v.length > max) return `must be at most ${max} characters`;
  return null;
}

function checkValue(column: ColumnState, v: unknown): Checked {
  switch (column.type) {
    case 'text': {
      const p = checkText(v, MAX_TEXT_VALUE);
      return p ? bad(p) : { ok: true, value: v as string, newOptions: [] };
    }
    case 'link': {
      const p = checkText(v, 2048);
      if (p) return bad(p);
      let u: URL;
      try {
        u = new URL((v as string).trim());
      } catch {
        return bad('must be an http(s) URL');
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return bad('must be an http(s) URL');
      return { ok: true, value: (v as string).trim(), newOptions: [] };
    }
    case 'number':
      if (typeof v !== 'number' || !Number.isFinite(v)) return bad('must be a number');
      return { ok: true, value: v, newOptions: [] };
    case 'date': {
      if (typeof v !== 'string') return bad('must be an ISO 8601 date string');
      const d = parseFilterDate(v, 'start');
      if (!d.ok) return bad(`must be an ISO 8601 date string (${d.error})`);
      return { ok: true, value: d.value.toISOString(), newOptions: [] };
    }
    case 'checkbox':
      if (typeof v !== 'boolean') return bad('must be a boolean');
      return { ok: true, value: v, newOptions: [] };
    case 'multi_select': {
      if (!Array.isArray(v)) return bad('must be an array of option labels');
      if (v.length > MAX_LABELS) return bad(`must have at most ${MAX_LABELS} labels`);
      const known = new Map(column.options.map((o) => [o.toLowerCase(), o]));
      const out: string[] = [];
      const added: string[] = [];
      for (let i = 0; i < v.length; i++) {
        const raw = v[i];
        const p = checkText(raw, MAX_LABEL);
        if (p) return bad(`[${i}] ${p}`);
        const l = (raw as string).trim();
        if (l === '') return bad(`[${i}] must not be empty`);
        // biome-ignore lint/suspicious/noControlCharactersInRegex: labels refuse control characters
        if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(l))
          return bad(`[${i}] must not contain control or bidi characters`);
        const k = l.toLowerCase();
        let canonical = known.get(k);
        if (canonical === undefined) {
          canonical = l;
          known.set(k, l);
          added.push(l);
        }
        if (!out.includes(canonical)) out.push(canonical);
      }
      return { ok: true, value: out, newOptions: added };
    }
    case 'generated':
      return bad('is a generated column: tracking cannot set it');
  }
}

/** What the fields of one row resolve to: values by column id, and the multi-select options they need created. */
export interface ResolvedFields {
  values: Record<string, ContentFieldValue>;
  /** column id -> labels to create (first spelling) */
  newOptions: Map<string, string[]>;
}

/**
 * Checks one row's `fields` against the destination tab (null: the shared pool, which has no customer columns):
 * the resolved values, or the first problem as a message naming the field (`<at>[j].column` / `<at>[j].value`).
 */
export function resolveFields(sheet: SheetState | null, fields: readonly FieldEntry[], at: string): ResolvedFields | string {
  const values: Record<string, ContentFieldValue> = {};
  const newOptions = new Map<string, string[]>();
  const columns = sheet?.columns ?? [];
  for (let j = 0; j < fields.length; j++) {
    const f = fields[j];
    const name = f.column.trim().toLowerCase();
    const column = columns.find((c) => c.name.toLowerCase() === name);
    if (!column) {
      return `${at}[${j}].column: no column ${JSON.stringify(f.column)} in ${sheet ? `the tab ${JSON.stringify(sheet.name)}` : 'the shared pool (send sheet_id to use a tab with columns)'}`;
    }
    if (column.type === 'generated') return `${at}[${j}].column: ${JSON.stringify(column.name)} is a generated column: tracking cannot set it`;
    if (Object.hasOwn(values, column.column_id)) return `${at}[${j}].column: ${JSON.stringify(column.name)} is given twice`;
    const c = checkValue(column, f.value);
    if (!c.ok) return `${at}[${j}].value: ${c.error}`;
    values[column.column_id] = c.value;
    if (c.newOptions.length) newOptions.set(column.column_id, c.newOptions);
  }
  return { values, newOptions };
}
