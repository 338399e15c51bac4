import { z } from 'zod';
import { MODEL_IDS } from '../../src/domain/models';

/**
 * Walks a zod input schema (through its JSON Schema) to every string field, and builds requests that put one value
 * in one field while every other field holds a valid value. A test can then tell that a 400 is about that field.
 */

type Js = {
  type?: string | string[];
  properties?: Record<string, Js>;
  required?: string[];
  items?: Js;
  anyOf?: Js[];
  oneOf?: Js[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minLength?: number;
  minItems?: number;
  minimum?: number;
  additionalProperties?: Js | boolean;
};

export type Path = (string | number)[];

export interface StringField {
  path: Path;
  /** an enum or constant: refused by its own list, not by the text check */
  enumerated: boolean;
}

const jsonSchema = (schema: z.ZodType): Js => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Js;

const branches = (s: Js): Js[] => [...(s.anyOf ?? []), ...(s.oneOf ?? [])];
const isType = (s: Js, t: string) => s.type === t || (Array.isArray(s.type) && s.type.includes(t));

/** The first branch of a union that is not null. */
function settle(s: Js): Js {
  const b = branches(s);
  if (!b.length) return s;
  return settle(b.find((x) => !isType(x, 'null')) ?? b[0]);
}

/** Valid values by field name where the type alone does not say what passes; where endpoints differ, candidates. */
const HINTS: Record<string, unknown[]> = {
  url: ['https://example.com'],
  website_url: ['https://example.com'],
  domain: ['example.com'],
  start_date: ['2026-01-01', '2026-01-01T00:00:00Z'],
  end_date: ['2026-01-02', '2026-01-02T00:00:00Z'],
  starts_on: ['2026-01-01'],
  ends_on: ['2026-01-02'],
  since: ['2026-01-01T00:00:00Z'],
  until: ['2026-01-02T00:00:00Z'],
  run_at: ['2026-01-01T00:00:00Z'],
  currency: ['USD'],
  schedule_id: ['default'],
  citations: ['https://example.com/a'],
  frequency: ['daily'],
  email: ['person@example.com'],
  current_start: ['2026-01-08'],
  current_end: ['2026-01-14'],
  previous_start: ['2026-01-01'],
  previous_end: ['2026-01-07'],
  event_types: ['*'],
};
/** Fields an "exactly one of" rule ties to another (role or role_id, website_ids or group_ids, url or draft): left out of `all`. */
const NOT_WITH_ALL = new Set(['role_id', 'group_ids', 'draft']);
const VARIANTS = Math.max(...Object.values(HINTS).map((h) => h.length));

const UUID = '00000000-0000-4000-8000-000000000001';

/** A valid value of a schema: required properties only, or every property with `all`; `variant` picks among hints. */
function sample(s0: Js, name: string, all: boolean, variant = 0): unknown {
  const s = settle(s0);
  if (s.const !== undefined) return s.const;
  if (s.enum?.length) return s.enum[0];
  if (isType(s, 'object') || s.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(s.properties ?? {}))
      if ((all && !NOT_WITH_ALL.has(k)) || s.required?.includes(k)) out[k] = sample(v, k, all, variant);
    return out;
  }
  if (isType(s, 'array')) return Array.from({ length: Math.max(s.minItems ?? 0, all ? 1 : 0) }, () => sample(s.items ?? {}, name, all, variant));
  if (isType(s, 'string')) {
    if (s.format === 'uuid') return UUID;
    if (s.format === 'email') return 'person@example.com';
    if (name in HINTS) return HINTS[name][variant % HINTS[name].length];
    if (/_ids?$/.test(name)) return UUID;
    if (s.format === 'date') return '2026-01-01';
    if (name === 'models' || name === 'model') return MODEL_IDS[0];
    return 'x'.repeat(Math.max(1, s.minLength ?? 1));
  }
  if (isType(s, 'integer') || isType(s, 'number')) return Math.max(1, s.minimum ?? 1);
  if (isType(s, 'boolean')) return false;
  return 'x';
}

/** Every string field of a schema, nested objects and arrays included (an array's field is its first item). */
export function stringFields(schema: z.ZodType): StringField[] {
  const out: StringField[] = [];
  const walk = (s0: Js, path: Path) => {
    const s = settle(s0);
    if (isType(s, 'object') || s.properties) {
      for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, [...path, k]);
      // a map of free values (a saved view's other filters): one made-up key stands for them all
      if (typeof s.additionalProperties === 'object') walk(s.additionalProperties, [...path, 'other_filter']);
    } else if (isType(s, 'array')) walk(s.items ?? {}, [...path, 0]);
    else if (isType(s, 'string') || (!s.type && !s.properties && !s.items))
      out.push({ path, enumerated: s.enum !== undefined || s.const !== undefined });
  };
  walk(jsonSchema(schema), []);
  return out;
}

function schemaAt(root: Js, path: Path): Js {
  let s = root;
  for (const step of path) {
    s = settle(s);
    s =
      typeof step === 'number'
        ? (s.items ?? {})
        : (s.properties?.[step] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : {}));
  }
  return s;
}

/** `input` with `value` at `path`, building what is missing on the way with valid values. */
function withValue(root: Js, input: unknown, path: Path, value: unknown, all: boolean, variant: number): unknown {
  const copy = structuredClone(input) as Record<string | number, unknown>;
  let at = copy;
  path.forEach((step, i) => {
    if (i === path.length - 1) {
      at[step] = value;
      return;
    }
    if (at[step] === undefined || at[step] === null || typeof at[step] !== 'object') {
      const next = path[i + 1];
      at[step] = typeof next === 'number' ? [] : (sample(schemaAt(root, path.slice(0, i + 1)), String(step), all, variant) ?? {});
    }
    at = at[step] as Record<string | number, unknown>;
  });
  return copy;
}

/** How a field is named in messages: a.b[0].c */
export const fieldName = (path: Path) => path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i ? `.${p}` : p)).join('');

const samePath = (a: PropertyKey[], b: Path) => a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * A builder of inputs for one schema: `(field, value)` is a valid input except for `value` at the field (a field
 * that refuses every value, naming itself, counts as valid around). Throws, naming the field and zod's complaint,
 * when no valid input can be built around it: add a hint above.
 */
export function inputsFor(schema: z.ZodType) {
  const root = jsonSchema(schema);
  /** `input`, and `textChecked`: whether a valid value passes there, so the text check is what refuses `value` */
  return (field: StringField, value: unknown): { input: unknown; textChecked: boolean } => {
    const name = String([...field.path].reverse().find((p) => typeof p === 'string') ?? '');
    let lastError = '';
    for (let variant = 0; variant < VARIANTS; variant++) {
      // every field present first: a field's check then meets the rules that tie it to others (start before end)
      for (const all of [true, false]) {
        const base = sample(root, '', all, variant);
        const valid = withValue(root, base, field.path, sample(schemaAt(root, field.path), name, all, variant), all, variant);
        const r = schema.safeParse(valid);
        if (r.success || samePath(r.error.issues[0].path, field.path)) {
          return { input: withValue(root, base, field.path, value, all, variant), textChecked: r.success && !field.enumerated };
        }
        lastError = JSON.stringify(r.error.issues[0]);
      }
    }
    throw new Error(`no valid input around ${fieldName(field.path)}: ${lastError}`);
  };
}

/** A valid input of a schema (required fields, or all of them where a rule ties them together). */
export function validInput(schema: z.ZodType): unknown {
  const root = jsonSchema(schema);
  for (let variant = 0; variant < VARIANTS; variant++) {
    for (const all of [false, true]) {
      const input = sample(root, '', all, variant);
      if (schema.safeParse(input).success) return input;
    }
  }
  throw new Error(`no valid input: ${JSON.stringify(schema.safeParse(sample(root, '', false)).error?.issues[0])}`);
}
