import type { Knex } from 'knex';
import { decodeFacts, type FactDictionaries, sameEntities } from '../../src/analysis/facts';
import { DomainErrorException, unavailable } from '../../src/domain/errors';
import type { Logger } from '../../src/logger';
import { siteEntityIdsSql } from '../../projections/site-entities';

/**
 * The metric facts of a website (rm_fact_chunks, written by the answers projection) held column by column in this
 * process, so a metric request scans typed arrays instead of rows. It is not a cache of answers to requests: every
 * request first reads the website's version (one indexed row) and loads the days written since, so it always
 * computes over exactly what the read model holds, on every instance. A re-derivation (new generation) or other
 * entities reload the website whole. Websites are evicted least-recently used past a byte budget.
 *
 * It never serves shifted columns: the site row's entity list must be the website's (siteEntities, read in the same
 * statement) and every chunk it loads must be laid out for that list. A website out of line is re-derived (the
 * `realign` the runtime gives, logged) and loaded again; if that is not possible the read is refused with 503, and
 * the website is listed by `outOfLine` (/readyz) until it is in line.
 */

const DAY_MS = 86_400_000;
export const dayNumber = (day: string) => Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
export const dayName = (n: number) => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** Answers of one day with one schedule and one model: rows [start, end) of the day's columns. */
export interface Segment {
  schedule: number;
  model: number;
  start: number;
  end: number;
  /**
   * Its answers summed (every prompt, location and time of the part): answers, answers mentioning any entity, and
   * per entity column mentions, citations, position sum and sum of squares. A selection that takes the segment
   * whole reads these instead of its rows.
   */
  sum: { responses: number; any: number; mentioned: Float64Array; cited: Float64Array; posSum: Float64Array; posSq: Float64Array };
}

function summed(d: { pos: Uint8Array; cite: Uint8Array }, E: number, start: number, end: number): Segment['sum'] {
  const sum = {
    responses: end - start,
    any: 0,
    mentioned: new Float64Array(E),
    cited: new Float64Array(E),
    posSum: new Float64Array(E),
    posSq: new Float64Array(E),
  };
  for (let i = start; i < end; i++) {
    let any = false;
    for (let e = 0; e < E; e++) {
      const p = d.pos[i * E + e];
      if (p !== 0) {
        any = true;
        sum.mentioned[e]++;
        sum.posSum[e] += p;
        sum.posSq[e] += p * p;
      }
      if (d.cite[i * E + e] !== 0) sum.cited[e]++;
    }
    if (any) sum.any++;
  }
  return sum;
}

/**
 * One UTC day of a website's answers; dictionary indices are the website's (SiteFacts), not the chunk's. Rows are
 * ordered by schedule and model, so a schedule or model filter reads only its segments.
 */
export interface DayFacts {
  day: number;
  /** a day's answers are stored in parts of bounded size */
  part: number;
  n: number;
  segments: Segment[];
  t: Uint32Array;
  prompt: Uint16Array;
  location: Uint16Array;
  /** n x entities */
  pos: Uint8Array;
  cite: Uint8Array;
  /** with at most 32 entities: the entities each answer mentions (bit = entity column), and those it cites */
  mentions: Uint32Array | null;
  cites: Uint32Array | null;
  bytes: number;
}

/** A growing id -> index dictionary of one website (indices stay valid while the website is held). */
export class Dictionary<K> {
  readonly keys: K[] = [];
  private readonly index = new Map<K, number>();
  of(k: K): number {
    let i = this.index.get(k);
    if (i === undefined) {
      i = this.keys.length;
      this.keys.push(k);
      this.index.set(k, i);
    }
    return i;
  }
  get(k: K): number | undefined {
    return this.index.get(k);
  }
  get size(): number {
    return this.keys.length;
  }
}

export interface SiteFacts {
  websiteId: string;
  version: bigint;
  generation: bigint;
  /** the table the head was read from: a rebuild swaps in new tables, whose versions say nothing about these */
  table: string;
  /** tracked entities (brand first), the order of the pos/cite columns */
  entities: string[];
  /** parts by `day:part`, and in (day, part) order */
  days: Map<string, DayFacts>;
  order: DayFacts[];
  prompts: Dictionary<string>;
  locations: Dictionary<string | null>;
  schedules: Dictionary<string | null>;
  models: Dictionary<string>;
  bytes: number;
}

export const emptySite = (websiteId: string, version: bigint, generation: bigint, entities: string[], table = ''): SiteFacts => ({
  websiteId,
  version,
  generation,
  table,
  entities,
  days: new Map(),
  order: [],
  prompts: new Dictionary(),
  locations: new Dictionary(),
  schedules: new Dictionary(),
  models: new Dictionary(),
  bytes: 0,
});

function remap16<K>(local: Uint16Array | Uint8Array, keys: readonly K[], dict: Dictionary<K>): Uint16Array {
  const map = keys.map((k) => dict.of(k));
  const out = new Uint16Array(local.length);
  for (let i = 0; i < local.length; i++) out[i] = map[local[i]];
  return out;
}

/** A stored chunk in the website's dictionaries, its rows ordered by schedule and model. */
function toDay(site: SiteFacts, day: number, part: number, meta: FactDictionaries & { n: number }, data: Uint8Array): DayFacts {
  const c = decodeFacts(meta, data);
  const n = c.n;
  const E = c.entities.length;
  const schedule = remap16(c.schedule, c.schedules, site.schedules);
  const model = remap16(c.model, c.models, site.models);
  const prompt = remap16(c.prompt, c.prompts, site.prompts);
  const location = remap16(c.location, c.locations, site.locations);
  // order: by (schedule, model), stable
  const keyOf = (i: number) => schedule[i] * 65536 + model[i];
  const rows = Array.from({ length: n }, (_, i) => i).sort((a, b) => keyOf(a) - keyOf(b) || a - b);
  const d: DayFacts = {
    day,
    part,
    n,
    segments: [],
    t: new Uint32Array(n),
    prompt: new Uint16Array(n),
    location: new Uint16Array(n),
    pos: new Uint8Array(n * E),
    cite: new Uint8Array(n * E),
    mentions: E <= 32 ? new Uint32Array(n) : null,
    cites: E <= 32 ? new Uint32Array(n) : null,
    bytes: 0,
  };
  for (let k = 0; k < n; k++) {
    const i = rows[k];
    d.t[k] = c.t[i];
    d.prompt[k] = prompt[i];
    d.location[k] = location[i];
    d.pos.set(c.pos.subarray(i * E, i * E + E), k * E);
    d.cite.set(c.cite.subarray(i * E, i * E + E), k * E);
    if (d.mentions && d.cites) {
      let m = 0;
      let x = 0;
      for (let e = 0; e < E; e++) {
        if (c.pos[i * E + e] !== 0) m |= 1 << e;
        if (c.cite[i * E + e] !== 0) x |= 1 << e;
      }
      d.mentions[k] = m >>> 0;
      d.cites[k] = x >>> 0;
    }
    const last = d.segments[d.segments.length - 1];
    if (last && last.schedule === schedule[i] && last.model === model[i]) last.end = k + 1;
    else d.segments.push({ schedule: schedule[i], model: model[i], start: k, end: k + 1, sum: null as never });
  }
  for (const seg of d.segments) seg.sum = summed(d, E, seg.start, seg.end);
  d.bytes = n * 16 + d.pos.length + d.cite.length + (96 + 32 * E) * d.segments.length + 200;
  return d;
}

/** Puts a stored part into a website's facts (replacing that part). */
export function putDay(site: SiteFacts, day: string, part: number, meta: FactDictionaries & { n: number }, data: Uint8Array): void {
  const key = `${day}:${part}`;
  const before = site.days.get(key);
  const d = toDay(site, dayNumber(day), part, meta, data);
  if (before) site.bytes -= before.bytes;
  site.days.set(key, d);
  site.bytes += d.bytes;
}

/** The parts in (day, part) order, after puts. */
export function sortParts(site: SiteFacts): void {
  site.order = [...site.days.values()].sort((a, b) => a.day - b.day || a.part - b.part);
}

/** What a read found out of line: the read is not served from it. */
class OutOfLine extends Error {
  constructor(readonly detail: string) {
    super(detail);
  }
}

/** A website found out of line and not re-derived yet (realign unavailable or failed). */
export interface FoundOutOfLine {
  website_id: string;
  detail: string;
  since: string;
}

export const OUT_OF_LINE_MESSAGE =
  "this website's metrics are being derived again (its stored facts did not match its brand and competitors); try again shortly";

/** The website's facts head, as read (with its entity list) in one statement; a caller may read it in its own (get). */
export interface Head {
  version: string | null;
  generation: string | null;
  entities: string[] | null;
  table: string | null;
  derived: string[];
}

interface ChunkRow {
  day: string;
  part: number;
  meta: FactDictionaries & { n: number };
  data: Buffer;
}

export class FactsCache {
  private readonly sites = new Map<string, SiteFacts>();
  private readonly loading = new Map<string, Promise<SiteFacts | null>>();
  private readonly realigning = new Map<string, Promise<unknown>>();
  private readonly unresolved = new Map<string, FoundOutOfLine>();
  private bytes = 0;
  /** re-derives a website found out of line (set by the runtime: a write, which queries do not do themselves) */
  realign: ((websiteId: string) => Promise<unknown>) | null = null;
  log: Logger | null = null;

  constructor(private readonly maxBytes = 512 * 1024 * 1024) {}

  /** The website's facts as the read model holds them now; 503 (DomainErrorException) when they are out of line and cannot be re-derived. */
  async get(db: Knex, websiteId: string, head?: Head): Promise<SiteFacts> {
    try {
      return await this.load(db, websiteId, 0, head);
    } catch (e) {
      if (!(e instanceof OutOfLine)) throw e;
      return this.realigned(db, websiteId, e.detail);
    }
  }

  /** Websites this process found out of line and could not re-derive (yet). */
  outOfLine(): FoundOutOfLine[] {
    return [...this.unresolved.values()];
  }

  /** A website found out of line is in line again (derived again elsewhere, or rebuilt). */
  inLine(websiteId: string): void {
    this.unresolved.delete(websiteId);
  }

  private async realigned(db: Knex, websiteId: string, detail: string): Promise<SiteFacts> {
    const refused = () => new DomainErrorException(unavailable(OUT_OF_LINE_MESSAGE, 5));
    if (!this.unresolved.has(websiteId)) this.unresolved.set(websiteId, { website_id: websiteId, detail, since: new Date().toISOString() });
    this.drop(websiteId);
    if (!this.realign) {
      this.log?.error({ website_id: websiteId, detail }, 'metric facts out of line with the website entities; refusing to serve them');
      throw refused();
    }
    this.log?.warn({ website_id: websiteId, detail }, 'metric facts out of line with the website entities; deriving them again');
    let going = this.realigning.get(websiteId);
    if (!going) {
      going = this.realign(websiteId).finally(() => this.realigning.delete(websiteId));
      this.realigning.set(websiteId, going);
    }
    try {
      await going;
      const site = await this.load(db, websiteId);
      this.unresolved.delete(websiteId);
      return site;
    } catch (e) {
      this.log?.error(
        { website_id: websiteId, detail, err: e },
        'metric facts out of line with the website entities and not derived again; refusing to serve them',
      );
      throw refused();
    }
  }

  private drop(websiteId: string) {
    const held = this.sites.get(websiteId);
    if (!held) return;
    this.sites.delete(websiteId);
    this.bytes -= held.bytes;
  }

  private readHead(db: Knex, websiteId: string): Promise<Head> {
    return db
      .raw(
        `select s.version::text as version, s.generation::text as generation, s.entities, s.tableoid::text as "table", ${siteEntityIdsSql('w.id')} as derived
           from (select ?::uuid as id) w left join rm_fact_sites s on s.website_id = w.id`,
        [websiteId],
      )
      .then((r: { rows: Head[] }) => r.rows[0]);
  }

  private async load(db: Knex, websiteId: string, attempt = 0, given?: Head): Promise<SiteFacts> {
    const head = given ?? (await this.readHead(db, websiteId));
    if (head.version === null || head.generation === null || head.entities === null || head.table === null) {
      // a website the answers read model does not know (yet): nothing to serve, nothing to shift
      if (head.derived.length) throw new OutOfLine(`no site row for entities [${head.derived.join(', ')}]`);
      return emptySite(websiteId, 0n, 0n, []);
    }
    if (!sameEntities(head.entities, head.derived))
      throw new OutOfLine(`the site row lists [${head.entities.join(', ')}], the website has [${head.derived.join(', ')}]`);
    const version = BigInt(head.version);
    const generation = BigInt(head.generation);
    const held = this.sites.get(websiteId);
    if (held && held.version >= version && held.generation === generation && held.table === head.table) {
      this.touch(websiteId, held);
      return held;
    }
    // one refresh per website at a time; a request that arrives meanwhile waits for it, then checks again
    const going = this.loading.get(websiteId);
    if (going) {
      await going.catch(() => undefined);
      return this.load(db, websiteId, attempt);
    }
    const p: Promise<SiteFacts | null> = this.refresh(db, websiteId, version, generation, head.entities, head.table, held).catch(async (e) => {
      if (!(e instanceof OutOfLine) || attempt >= 3) throw e;
      // a chunk of another layout may have been written after the head was read (a re-derivation, a rebuild's swap):
      // only a head that has not moved makes it a website out of line
      const now = await this.readHead(db, websiteId);
      if (now.version === head.version && now.generation === head.generation && now.table === head.table) throw e;
      return null;
    });
    this.loading.set(websiteId, p);
    let site: SiteFacts | null;
    try {
      site = await p;
    } finally {
      this.loading.delete(websiteId);
    }
    return site ?? this.load(db, websiteId, attempt + 1);
  }

  private async refresh(
    db: Knex,
    websiteId: string,
    version: bigint,
    generation: bigint,
    entities: string[],
    table: string,
    held: SiteFacts | undefined,
  ): Promise<SiteFacts> {
    const whole = !held || held.generation !== generation || held.table !== table || held.entities.join() !== entities.join();
    const site = whole ? emptySite(websiteId, version, generation, entities, table) : held;
    const q = db('rm_fact_chunks').where('website_id', websiteId).select(db.raw('day::text as day'), 'part', 'meta', 'data');
    // a chunk written after the head was read is taken too (and read again next time: versions only grow)
    if (!whole) q.andWhere('version', '>', held.version.toString());
    const rows: ChunkRow[] = await q;
    const other = rows.find((r) => !sameEntities(r.meta.entities, entities));
    if (other)
      throw new OutOfLine(
        `facts of ${other.day} (part ${other.part}) are laid out for [${other.meta.entities.join(', ')}], the site row lists [${entities.join(', ')}]`,
      );
    for (const r of rows) putDay(site, r.day, r.part, r.meta, r.data);
    sortParts(site);
    site.version = version;
    if (held) this.bytes -= held.bytes;
    this.sites.delete(websiteId);
    this.sites.set(websiteId, site);
    this.bytes += site.bytes;
    this.evict(websiteId);
    return site;
  }

  private touch(websiteId: string, site: SiteFacts) {
    this.sites.delete(websiteId);
    this.sites.set(websiteId, site);
  }

  private evict(keep: string) {
    for (const [id, s] of this.sites) {
      if (this.bytes <= this.maxBytes) break;
      if (id === keep) continue;
      this.sites.delete(id);
      this.bytes -= s.bytes;
    }
  }

  /** Bytes of facts held (for /readyz and the bench). */
  get size(): number {
    return this.bytes;
  }
}
