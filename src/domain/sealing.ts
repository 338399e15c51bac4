import { z } from 'zod';

/**
 * Erasable fields, declared in the event catalogue. Three markers:
 *
 * - `subject('content')` on an id field: the object it sits in belongs to the subject `content-<id>`;
 * - `sealed(schema)` on a field a user can erase: stored encrypted with the key of the nearest enclosing subject
 *   (`sealed(schema, { subject: 'field' })` names the subject field when an object has several); once the subject
 *   is erased the field reads as null, hence its type `T | null`;
 * - `erases('content')` on an id field (or the elements of an id array): appending the event erases `content-<id>`.
 *
 * The event store's sealing layer (src/eventstore/sealed.ts) compiles these once per catalogue, encrypts on append,
 * decrypts on every read and drops the keys of erased subjects.
 */

type Marker = { kind: 'subject'; prefix: string } | { kind: 'sealed'; subjectField: string | null } | { kind: 'erases'; prefix: string };

const markers = new WeakMap<z.ZodType, Marker>();
const PREFIX = /^[a-z][a-z0-9_]*$/;

function checkPrefix(prefix: string): string {
  if (!PREFIX.test(prefix)) throw new Error(`subject prefix ${JSON.stringify(prefix)} must match ${PREFIX}`);
  return prefix;
}

/** An id naming the subject its object belongs to: `<prefix>-<id>`. */
export function subject(prefix: string): z.ZodString {
  const s = z.string().min(1);
  markers.set(s, { kind: 'subject', prefix: checkPrefix(prefix) });
  return s;
}

/** A field a user can erase: encrypted in the log with its subject's key; null once the subject is erased. */
export function sealed<T extends z.ZodType>(schema: T, options: { subject?: string } = {}): z.ZodNullable<T> {
  const s = schema.nullable();
  markers.set(s, { kind: 'sealed', subjectField: options.subject ?? null });
  return s;
}

/** An id whose subject (`<prefix>-<id>`) the event erases: its key is dropped once the event is appended. */
export function erases(prefix: string): z.ZodString {
  const s = z.string().min(1);
  markers.set(s, { kind: 'erases', prefix: checkPrefix(prefix) });
  return s;
}

type Node =
  | { kind: 'object'; fields: [string, Node][]; subjects: [string, string][] }
  | { kind: 'array'; element: Node }
  | { kind: 'sealed'; subjectField: string }
  | { kind: 'erases'; prefix: string };

/** The subjects in scope at a point of an event's data: the nearest enclosing ones first. */
interface Scope {
  field: string;
  subject: string | null;
  parent: Scope | null;
}

/** What the sealing layer needs to know of one event type. */
export interface SealingPlan {
  readonly type: string;
  /** dotted paths of the sealed fields (`[]` for array elements), for messages and tests */
  readonly sealedPaths: readonly string[];
  /** the type has sealed fields */
  readonly seals: boolean;
  /** the type erases subjects */
  readonly erases: boolean;
  /**
   * A copy of `data` with every sealed value present replaced by fn(value, subject); objects and arrays are copied
   * only along the way to a changed value, and `data` itself comes back when nothing changed.
   */
  mapSealed(data: unknown, fn: (value: unknown, subject: string) => unknown): unknown;
  /** The subjects the event erases. */
  erased(data: unknown): string[];
}

export class SealingDeclarationError extends Error {}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function unwrapOptional(schema: z.ZodType): { inner: z.ZodType; optional: boolean } {
  let s = schema;
  let optional = false;
  for (;;) {
    if (markers.has(s)) return { inner: s, optional };
    const def = s._zod.def as { type: string; innerType?: z.ZodType };
    if (def.type === 'optional' || def.type === 'nullable' || def.type === 'default' || def.type === 'prefault') optional = true;
    else if (def.type !== 'readonly' && def.type !== 'catch' && def.type !== 'nonoptional') return { inner: s, optional };
    s = def.innerType!;
  }
}

/** Children of containers the plan does not walk: a marker inside one of them is refused. */
function opaqueChildren(schema: z.ZodType): z.ZodType[] {
  const def = schema._zod.def as Record<string, unknown> & { type: string };
  switch (def.type) {
    case 'union':
      return def.options as z.ZodType[];
    case 'record':
    case 'map':
    case 'set':
      return [def.valueType as z.ZodType];
    case 'lazy':
      return [(def.getter as () => z.ZodType)()];
    case 'tuple':
      return [...(def.items as z.ZodType[]), ...(def.rest ? [def.rest as z.ZodType] : [])];
    case 'intersection':
      return [def.left as z.ZodType, def.right as z.ZodType];
    case 'pipe':
      return [def.in as z.ZodType, def.out as z.ZodType];
    default:
      return [];
  }
}

function containsMarker(schema: z.ZodType, seen = new Set<z.ZodType>()): boolean {
  if (seen.has(schema)) return false;
  seen.add(schema);
  if (markers.has(schema)) return true;
  const { inner } = unwrapOptional(schema);
  if (inner !== schema) return containsMarker(inner, seen);
  const def = schema._zod.def as { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType };
  if (def.type === 'object') return Object.values(def.shape!).some((s) => containsMarker(s, seen));
  if (def.type === 'array') return containsMarker(def.element!, seen);
  return opaqueChildren(schema).some((s) => containsMarker(s, seen));
}

function compileNode(type: string, schema: z.ZodType, path: string, scopes: [string, string][][]): Node | null {
  const { inner } = unwrapOptional(schema);
  const marker = markers.get(inner);
  const where = `${type}.${path}`;
  if (marker?.kind === 'sealed') {
    if (containsMarker((inner as z.ZodNullable<z.ZodType>).unwrap()))
      throw new SealingDeclarationError(`${where}: a sealed field cannot hold other markers`);
    for (const level of scopes) {
      const found = marker.subjectField === null ? level : level.filter(([f]) => f === marker.subjectField);
      if (found.length > 1) {
        throw new SealingDeclarationError(
          `${where}: several subject fields (${found.map(([f]) => f).join(', ')}); name one with sealed(schema, { subject })`,
        );
      }
      if (found.length === 1) return { kind: 'sealed', subjectField: found[0][0] };
    }
    throw new SealingDeclarationError(
      marker.subjectField === null
        ? `${where}: sealed field without a subject (mark its id with subject('<prefix>') in an enclosing object)`
        : `${where}: no enclosing subject field named ${marker.subjectField}`,
    );
  }
  if (marker?.kind === 'erases') return { kind: 'erases', prefix: marker.prefix };
  if (marker?.kind === 'subject') return null;
  const def = inner._zod.def as { type: string; shape?: Record<string, z.ZodType>; element?: z.ZodType };
  if (def.type === 'object') {
    const subjects: [string, string][] = [];
    for (const [k, s] of Object.entries(def.shape!)) {
      const u = unwrapOptional(s);
      const m = markers.get(u.inner);
      if (m?.kind !== 'subject') continue;
      if (u.optional) throw new SealingDeclarationError(`${type}.${path ? `${path}.` : ''}${k}: a subject id must be required`);
      subjects.push([k, m.prefix]);
    }
    const fields: [string, Node][] = [];
    for (const [k, s] of Object.entries(def.shape!)) {
      const n = compileNode(type, s, path ? `${path}.${k}` : k, [subjects, ...scopes]);
      if (n) fields.push([k, n]);
    }
    return fields.length ? { kind: 'object', fields, subjects } : null;
  }
  if (def.type === 'array') {
    const n = compileNode(type, def.element!, `${path}[]`, scopes);
    return n ? { kind: 'array', element: n } : null;
  }
  if (containsMarker(inner)) throw new SealingDeclarationError(`${where}: markers inside a ${def.type} are not supported (use objects and arrays)`);
  return null;
}

function lookup(scope: Scope | null, field: string): string | null {
  for (let s = scope; s; s = s.parent) if (s.field === field) return s.subject;
  return null;
}

function mapNode(node: Node, value: unknown, scope: Scope | null, fn: (value: unknown, subject: string) => unknown): unknown {
  switch (node.kind) {
    case 'sealed': {
      const subjectId = lookup(scope, node.subjectField);
      if (subjectId === null) throw new SealingDeclarationError(`sealed value without its subject id (${node.subjectField})`);
      return fn(value, subjectId);
    }
    case 'erases':
      return value;
    case 'array': {
      if (!Array.isArray(value)) return value;
      let out: unknown[] = value;
      for (let i = 0; i < value.length; i++) {
        const v = mapNode(node.element, value[i], scope, fn);
        if (v !== value[i]) {
          if (out === value) out = value.slice();
          out[i] = v;
        }
      }
      return out;
    }
    case 'object': {
      if (!isRecord(value)) return value;
      let inner = scope;
      for (const [field, prefix] of node.subjects) {
        const id = value[field];
        inner = { field, subject: typeof id === 'string' && id ? `${prefix}-${id}` : null, parent: inner };
      }
      let out: Record<string, unknown> = value;
      for (const [k, child] of node.fields) {
        const v = value[k];
        if (v === undefined) continue;
        const m = mapNode(child, v, inner, fn);
        if (m !== v) {
          if (out === value) out = { ...value };
          out[k] = m;
        }
      }
      return out;
    }
  }
}

function hasErases(node: Node): boolean {
  if (node.kind === 'erases') return true;
  if (node.kind === 'array') return hasErases(node.element);
  if (node.kind === 'object') return node.fields.some(([, n]) => hasErases(n));
  return false;
}

function paths(node: Node, at: string, out: string[]): void {
  if (node.kind === 'sealed') out.push(at);
  else if (node.kind === 'array') paths(node.element, `${at}[]`, out);
  else if (node.kind === 'object') for (const [k, n] of node.fields) paths(n, at ? `${at}.${k}` : k, out);
}

/** One plan per event type that seals or erases; throws SealingDeclarationError on a declaration it cannot honour. */
export function compileSealing(catalogue: Readonly<Record<string, z.ZodType>>): Map<string, SealingPlan> {
  const plans = new Map<string, SealingPlan>();
  for (const [type, schema] of Object.entries(catalogue)) {
    const root = compileNode(type, schema, '', []);
    if (!root) continue;
    const sealedPaths: string[] = [];
    paths(root, '', sealedPaths);
    plans.set(type, {
      type,
      sealedPaths,
      seals: sealedPaths.length > 0,
      erases: hasErases(root),
      mapSealed: (data, fn) => mapNode(root, data, null, fn),
      erased: (data) => {
        const out: string[] = [];
        collectErased(root, data, out);
        return out;
      },
    });
  }
  return plans;
}

function collectErased(node: Node, value: unknown, out: string[]): void {
  if (node.kind === 'erases') {
    if (typeof value === 'string' && value) out.push(`${node.prefix}-${value}`);
  } else if (node.kind === 'array') {
    if (Array.isArray(value)) for (const v of value) collectErased(node.element, v, out);
  } else if (node.kind === 'object') {
    if (isRecord(value)) for (const [k, n] of node.fields) collectErased(n, value[k], out);
  }
}

/** Every sealed value's subject in `data` (those fn keeps), without copying anything. */
export function sealedSubjects(plan: SealingPlan, data: unknown, into: Set<string>, keep: (value: unknown) => boolean = () => true): void {
  plan.mapSealed(data, (v, s) => {
    if (keep(v)) into.add(s);
    return v;
  });
}
