/**
 * Metric facts of one website and one UTC day, column by column: what the metric queries scan. One entry per
 * answer (its time within the day, prompt, location, schedule, model) and, per tracked entity, the entity's
 * 1-based position in the answer (0 = not mentioned) and whether the answer cites it. Dictionaries map the small
 * per-chunk indices back to ids; `entities` lists the website's tracked entities (brand first) in the order the
 * position and citation columns use, the same for every chunk of a website.
 *
 * Stored as a JSON dictionary plus one binary column (rm_fact_chunks): a 90-day dashboard reads 90 rows, and a
 * re-derivation of a website rewrites one row per day instead of one per answer.
 */

export interface FactDictionaries {
  entities: string[];
  prompts: string[];
  /** null: no location */
  locations: (string | null)[];
  /** null: the default schedule */
  schedules: (string | null)[];
  models: string[];
}

export interface FactChunk extends FactDictionaries {
  n: number;
  /** milliseconds since the day's UTC midnight */
  t: Uint32Array;
  prompt: Uint16Array;
  location: Uint16Array;
  schedule: Uint16Array;
  model: Uint8Array;
  /** n x entities: position of entity e in answer i at i * E + e; 0 = not mentioned (positions above 255 read 255) */
  pos: Uint8Array;
  /** n x entities: 1 when answer i cites entity e */
  cite: Uint8Array;
}

export interface FactRow {
  t: number;
  prompt_id: string;
  location_id: string | null;
  schedule_id: string | null;
  model: string;
  /** [entity slot, position] pairs */
  mentions: ReadonlyArray<readonly [number, number]>;
  /** entity slots cited */
  cited: readonly number[];
}

const MAX_DICT = 65535;

class Dict<T> {
  readonly values: T[];
  private readonly index = new Map<T, number>();
  constructor(values: readonly T[] = []) {
    this.values = [...values];
    for (let i = 0; i < this.values.length; i++) this.index.set(this.values[i], i);
  }
  of(v: T, limit = MAX_DICT): number {
    let i = this.index.get(v);
    if (i === undefined) {
      i = this.values.length;
      if (i >= limit) throw new Error(`fact chunk: more than ${limit} distinct values`);
      this.values.push(v);
      this.index.set(v, i);
    }
    return i;
  }
}

function grow<T extends Uint8Array | Uint16Array | Uint32Array>(a: T, need: number): T {
  if (a.length >= need) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2, 64));
  b.set(a);
  return b;
}

/** Accumulates one chunk: starts from an existing chunk (appending) or empty. */
export class FactChunkBuilder {
  private readonly prompts: Dict<string>;
  private readonly locations: Dict<string | null>;
  private readonly schedules: Dict<string | null>;
  private readonly models: Dict<string>;
  readonly entities: string[];
  private n = 0;
  private t = new Uint32Array(0);
  private prompt = new Uint16Array(0);
  private location = new Uint16Array(0);
  private schedule = new Uint16Array(0);
  private model = new Uint8Array(0);
  private pos = new Uint8Array(0);
  private cite = new Uint8Array(0);

  constructor(entities: readonly string[], from?: FactChunk) {
    this.entities = [...entities];
    if (from && !sameEntities(from.entities, entities)) throw new Error('fact chunk: entities differ; re-derive the website');
    this.prompts = new Dict(from?.prompts);
    this.locations = new Dict(from?.locations);
    this.schedules = new Dict(from?.schedules);
    this.models = new Dict(from?.models);
    if (from) {
      this.n = from.n;
      this.t = from.t.slice();
      this.prompt = from.prompt.slice();
      this.location = from.location.slice();
      this.schedule = from.schedule.slice();
      this.model = from.model.slice();
      this.pos = from.pos.slice();
      this.cite = from.cite.slice();
    }
  }

  get size(): number {
    return this.n;
  }

  add(row: FactRow): void {
    const i = this.n++;
    const E = this.entities.length;
    this.t = grow(this.t, this.n);
    this.prompt = grow(this.prompt, this.n);
    this.location = grow(this.location, this.n);
    this.schedule = grow(this.schedule, this.n);
    this.model = grow(this.model, this.n);
    this.pos = grow(this.pos, this.n * E);
    this.cite = grow(this.cite, this.n * E);
    this.t[i] = row.t;
    this.prompt[i] = this.prompts.of(row.prompt_id);
    this.location[i] = this.locations.of(row.location_id);
    this.schedule[i] = this.schedules.of(row.schedule_id);
    this.model[i] = this.models.of(row.model, 255);
    const base = i * E;
    this.pos.fill(0, base, base + E);
    this.cite.fill(0, base, base + E);
    for (const [slot, p] of row.mentions) if (slot < E) this.pos[base + slot] = Math.min(255, Math.max(1, p));
    for (const slot of row.cited) if (slot < E) this.cite[base + slot] = 1;
  }

  build(): FactChunk {
    const n = this.n;
    const E = this.entities.length;
    return {
      entities: this.entities,
      prompts: this.prompts.values,
      locations: this.locations.values,
      schedules: this.schedules.values,
      models: this.models.values,
      n,
      t: this.t.slice(0, n),
      prompt: this.prompt.slice(0, n),
      location: this.location.slice(0, n),
      schedule: this.schedule.slice(0, n),
      model: this.model.slice(0, n),
      pos: this.pos.slice(0, n * E),
      cite: this.cite.slice(0, n * E),
    };
  }
}

export const sameEntities = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

const pad4 = (x: number) => (x + 3) & ~3;

/** The binary column: t, prompt, location, schedule, model, pos, cite (each section 4-byte aligned). */
export function encodeFacts(c: FactChunk): { meta: FactDictionaries & { n: number }; data: Buffer } {
  const n = c.n;
  const E = c.entities.length;
  const sizes = [4 * n, 2 * n, 2 * n, 2 * n, n, n * E, n * E];
  const total = sizes.reduce((s, x) => s + pad4(x), 0);
  const buf = Buffer.alloc(total);
  let off = 0;
  for (const [a, size] of [
    [c.t, sizes[0]],
    [c.prompt, sizes[1]],
    [c.location, sizes[2]],
    [c.schedule, sizes[3]],
    [c.model, sizes[4]],
    [c.pos, sizes[5]],
    [c.cite, sizes[6]],
  ] as const) {
    buf.set(new Uint8Array(a.buffer, a.byteOffset, size), off);
    off += pad4(size);
  }
  return { meta: { n, entities: c.entities, prompts: c.prompts, locations: c.locations, schedules: c.schedules, models: c.models }, data: buf };
}

/**
 * A stored chunk's columns. They are views of a copy of `data` (typed-array views need aligned offsets): a fresh buffer,
 * or `scratch` when it is given and large enough, for a caller that reads the columns and lets them go before it
 * decodes the next chunk (the metrics load: no buffer to collect per chunk).
 */
export function decodeFacts(meta: FactDictionaries & { n: number }, data: Uint8Array, scratch?: ArrayBuffer): FactChunk {
  const n = meta.n;
  const E = meta.entities.length;
  const ab = scratch && scratch.byteLength >= data.byteLength ? scratch : new ArrayBuffer(data.byteLength);
  new Uint8Array(ab, 0, data.byteLength).set(data);
  let off = 0;
  const take = <T>(make: (o: number) => T, bytes: number): T => {
    const v = make(off);
    off += pad4(bytes);
    return v;
  };
  if (data.byteLength < pad4(4 * n) + 3 * pad4(2 * n) + pad4(n) + 2 * pad4(n * E))
    throw new Error('fact chunk: data is shorter than its dictionary says');
  return {
    entities: meta.entities,
    prompts: meta.prompts,
    locations: meta.locations,
    schedules: meta.schedules,
    models: meta.models,
    n,
    t: take((o) => new Uint32Array(ab, o, n), 4 * n),
    prompt: take((o) => new Uint16Array(ab, o, n), 2 * n),
    location: take((o) => new Uint16Array(ab, o, n), 2 * n),
    schedule: take((o) => new Uint16Array(ab, o, n), 2 * n),
    model: take((o) => new Uint8Array(ab, o, n), n),
    pos: take((o) => new Uint8Array(ab, o, n * E), n * E),
    cite: take((o) => new Uint8Array(ab, o, n * E), n * E),
  };
}

const DAY_MS = 86_400_000;
const dayNames = new Map<number, string>();

/** Milliseconds since the UTC midnight of an instant's day, and that day as YYYY-MM-DD. */
export function dayAndTime(at: Date): { day: string; t: number } {
  const ms = at.getTime();
  const n = Math.floor(ms / DAY_MS);
  let day = dayNames.get(n);
  if (day === undefined) {
    day = new Date(n * DAY_MS).toISOString().slice(0, 10);
    if (dayNames.size > 100_000) dayNames.clear();
    dayNames.set(n, day);
  }
  return { day, t: ms - n * DAY_MS };
}
