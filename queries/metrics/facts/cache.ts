import type { Knex } from 'knex';
import { sameEntities } from '../../../src/analysis/facts';
import { DomainErrorException, unavailable } from '../../../src/domain/errors';
import type { Logger } from '../../../src/logger';
import { siteEntityIdsSql } from '../../../projections/site-entities';
import { type ChunkRow, readChunks } from '../fact-chunks';
import { ALL_DAYS, type DayRange, dayName, dayNumber, emptySite, putDay, type SiteFacts, sortParts } from './layout';

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

/**
 * Parts read per query when a range is loaded (on the 1.2 M-answer website about 4 MB): the first query takes
 * FIRST_SLICE_DAYS days (little to wait for before decoding starts: the next slice is read meanwhile), the next ones
 * up to four times the days of the one before, as many as hold about SLICE_PARTS parts at the rate seen so far. The
 * background load reads SLICE_DAYS a query.
 */
const SLICE_PARTS = 128;
const SLICE_DAYS = 32;
const FIRST_SLICE_DAYS = 4;
/**
 * Loading decodes for at most this long before giving the event loop back, so other websites' requests go on: a request
 * of another website waits up to one slice at each of its turns on the loop (the socket, its statement's answer), so
 * the slice is short (6 ms made a small website's p95 about 70 ms during a cold year load).
 */
const SLICE_MS = 2;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What /readyz reports about the facts held. */
export interface FactsCacheStats {
  budget_bytes: number;
  held_bytes: number;
  websites_held: number;
  /** loads of a website's days for a request (whole or extending what is held) since the start */
  loads: number;
  /** websites dropped to stay within the budget since the start */
  evictions: number;
}

export class FactsCache {
  private readonly sites = new Map<string, SiteFacts>();
  /** the bytes of each held website as counted in `bytes` */
  private readonly counted = new Map<string, number>();
  /** one load per website at a time (a request's or a background slice); others wait for it, then check again */
  private readonly loading = new Map<string, Promise<unknown>>();
  /** websites whose other days are being loaded in the background */
  private readonly filling = new Map<string, SiteFacts>();
  private readonly realigning = new Map<string, Promise<unknown>>();
  private readonly unresolved = new Map<string, FoundOutOfLine>();
  private bytes = 0;
  private loads = 0;
  private evictions = 0;
  /** re-derives a website found out of line (set by the runtime: a write, which queries do not do themselves) */
  realign: ((websiteId: string) => Promise<unknown>) | null = null;
  log: Logger | null = null;

  /** `maxBytes`: the budget (FACTS_CACHE_MB); least recently used websites are dropped past it */
  constructor(public maxBytes = 512 * 1024 * 1024) {}

  /**
   * The website's facts as the read model holds them now, at least for `days` (the website's other days follow in the
   * background while the budget allows); 503 (DomainErrorException) when they are out of line and cannot be re-derived.
   * `head`: the facts head the caller read already (readForMetrics), else it is read here. `options.fill` false: a
   * load for this read does not go on to the website's other days (an alert evaluation needs its windows only; a
   * metrics read of the website fills them as usual).
   */
  async get(db: Knex, websiteId: string, days: DayRange = ALL_DAYS, head?: Head, options: { fill?: boolean } = {}): Promise<SiteFacts> {
    const fill = options.fill ?? true;
    try {
      return await this.load(db, websiteId, days, 0, head, fill);
    } catch (e) {
      if (!(e instanceof OutOfLine)) throw e;
      return this.realigned(db, websiteId, days, e.detail, fill);
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

  private async realigned(db: Knex, websiteId: string, days: DayRange, detail: string, fill: boolean): Promise<SiteFacts> {
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
      const site = await this.load(db, websiteId, days, 0, undefined, fill);
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
    const site = this.sites.get(websiteId);
    if (!site) return;
    site.dropped = true;
    this.sites.delete(websiteId);
    this.bytes -= this.counted.get(websiteId) ?? 0;
    this.counted.delete(websiteId);
  }

  /** Counts a held website's bytes again after its days changed (nothing when it is no longer held). */
  private recount(websiteId: string, site: SiteFacts) {
    if (this.sites.get(websiteId) !== site) return;
    this.bytes += site.bytes - (this.counted.get(websiteId) ?? 0);
    this.counted.set(websiteId, site.bytes);
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

  private async load(db: Knex, websiteId: string, days: DayRange, attempt = 0, given?: Head, fill = true): Promise<SiteFacts> {
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
    if (
      held &&
      held.version >= version &&
      held.generation === generation &&
      held.table === head.table &&
      held.from <= days.first &&
      held.to >= days.last
    ) {
      this.touch(websiteId, held);
      return held;
    }
    // one load per website at a time; a request that arrives meanwhile waits for it, then checks again
    const going = this.loading.get(websiteId);
    if (going) {
      await going.catch(() => undefined);
      return this.load(db, websiteId, days, attempt, undefined, fill);
    }
    const p: Promise<SiteFacts | null> = this.refresh(db, websiteId, version, generation, head.entities, head.table, held, days).catch(async (e) => {
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
    if (!site) return this.load(db, websiteId, days, attempt + 1, undefined, fill);
    if (fill) this.fillLater(db, websiteId, site);
    return site;
  }

  private async refresh(
    db: Knex,
    websiteId: string,
    version: bigint,
    generation: bigint,
    entities: string[],
    table: string,
    held: SiteFacts | undefined,
    days: DayRange,
  ): Promise<SiteFacts> {
    this.loads++;
    const whole = !held || held.generation !== generation || held.table !== table || held.entities.join() !== entities.join();
    const site = whole ? emptySite(websiteId, version, generation, entities, table) : held;
    try {
      if (whole) {
        site.from = days.first;
        site.to = days.last;
        await this.readDays(db, site, days.first, days.last, null);
      } else {
        // what was written since, among the days held (a chunk written after the head was read is taken too, and
        // read again next time: versions only grow); then the days the request needs besides
        if (version > site.version) await this.readDays(db, site, site.from, site.to, site.version);
        if (days.first < site.from) {
          await this.readDays(db, site, days.first, site.from - 1, null);
          site.from = days.first;
        }
        if (days.last > site.to) {
          await this.readDays(db, site, site.to + 1, days.last, null);
          site.to = days.last;
        }
      }
    } catch (e) {
      // a held website read in part is not served: the next request loads it whole
      if (!whole) this.drop(websiteId);
      throw e;
    }
    if (version > site.version) site.version = version;
    if (whole) {
      this.drop(websiteId);
      site.dropped = false;
      this.sites.set(websiteId, site);
    } else this.touch(websiteId, site);
    this.recount(websiteId, site);
    this.evict(websiteId);
    return site;
  }

  /**
   * Reads the stored parts of days [first, last] into `site` (with `since`, only those written after that version),
   * newest days first, in slices (`firstSlice` days, then about SLICE_PARTS parts) each asked for while the one before is
   * decoded, giving the event loop back every SLICE_MS of decoding.
   */
  private async readDays(db: Knex, site: SiteFacts, first: number, last: number, since: bigint | null, firstSlice = FIRST_SLICE_DAYS): Promise<void> {
    if (first > last) return;
    const id = site.websiteId;
    const query = (lo: number, hi: number) =>
      readChunks(db, { websiteId: id, lo: Number.isFinite(lo) ? dayName(lo) : null, hi: Number.isFinite(hi) ? dayName(hi) : null, since });
    if (since !== null) {
      await this.put(site, await query(first, last));
      return;
    }
    let lo = first;
    let hi = last;
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
      const ext: { lo: string | null; hi: string | null } = await db('rm_fact_chunks')
        .where('website_id', id)
        .first(db.raw('min(day)::text as lo'), db.raw('max(day)::text as hi'));
      if (!ext || ext.lo === null || ext.hi === null) return;
      lo = Math.max(lo, dayNumber(ext.lo));
      hi = Math.min(hi, dayNumber(ext.hi));
    }
    // the next slice is asked for before this one is decoded: Postgres reads it (the other core) meanwhile
    let top = hi;
    let bottom = Math.max(lo, top - firstSlice + 1);
    let pending: Promise<ChunkRow[]> | null = query(bottom, top);
    try {
      while (pending !== null) {
        const rows: ChunkRow[] = await pending;
        pending = null;
        const span = top - bottom + 1;
        const days = Math.max(1, Math.min(4 * span, Math.floor((SLICE_PARTS * span) / Math.max(1, rows.length))));
        top = bottom - 1;
        if (top >= lo) {
          bottom = Math.max(lo, top - days + 1);
          pending = query(bottom, top);
        }
        await this.put(site, rows);
      }
    } finally {
      // a slice asked for and not put (a put refused): its answer is not waited for
      pending?.catch(() => undefined);
    }
  }

  /** Puts parts read into `site` (all or none when one is laid out for other entities), yielding as it goes. */
  private async put(site: SiteFacts, rows: ChunkRow[]): Promise<void> {
    const other = rows.find((r) => !sameEntities(r.meta.entities, site.entities));
    if (other)
      throw new OutOfLine(
        `facts of ${other.day} (part ${other.part}) are laid out for [${other.meta.entities.join(', ')}], the site row lists [${site.entities.join(', ')}]`,
      );
    let since = performance.now();
    for (const r of rows) {
      putDay(site, r.day, r.part, r.meta, r.data);
      if (performance.now() - since >= SLICE_MS) {
        // a held website is read meanwhile (its days held): its parts stay in order; one loaded whole is not served yet
        if (this.sites.get(site.websiteId) === site) sortParts(site);
        await yieldToLoop();
        since = performance.now();
      }
    }
    sortParts(site);
  }

  /**
   * Loads a held website's other days in the background, a slice at a time (newer days first), while the facts held
   * stay within the budget (it never drops another website); a request for the website waits at most one slice.
   */
  private fillLater(db: Knex, websiteId: string, site: SiteFacts) {
    if (this.filling.get(websiteId) === site || (site.from === Number.NEGATIVE_INFINITY && site.to === Number.POSITIVE_INFINITY)) return;
    this.filling.set(websiteId, site);
    this.fill(db, websiteId, site)
      .catch((e) => this.log?.debug({ website_id: websiteId, err: e }, 'metric facts: background load stopped; requests load what they need'))
      .finally(() => {
        if (this.filling.get(websiteId) === site) this.filling.delete(websiteId);
      });
  }

  private async fill(db: Knex, websiteId: string, site: SiteFacts): Promise<void> {
    await yieldToLoop();
    const ext: { lo: string | null; hi: string | null } = await db('rm_fact_chunks')
      .where('website_id', websiteId)
      .first(db.raw('min(day)::text as lo'), db.raw('max(day)::text as hi'));
    if (!ext || ext.lo === null || ext.hi === null) return;
    const min = dayNumber(ext.lo);
    const max = dayNumber(ext.hi);
    for (;;) {
      if (this.sites.get(websiteId) !== site || this.bytes + this.sliceBytes(site) > this.maxBytes) return;
      const going = this.loading.get(websiteId);
      if (going) {
        await going.catch(() => undefined);
        continue;
      }
      let lo: number;
      let hi: number;
      if (site.to < max) [lo, hi] = [site.to + 1, Math.min(max, site.to + SLICE_DAYS)];
      else if (site.from > min) [lo, hi] = [Math.max(min, site.from - SLICE_DAYS), site.from - 1];
      else return;
      // a background slice in one query: no request waits for its first parts
      const p = this.readDays(db, site, lo, hi, null, SLICE_DAYS).then(() => {
        // the held days grow by what was read (a request may have extended them meanwhile: never shrink)
        if (lo < site.from && hi >= site.from - 1) site.from = lo;
        if (hi > site.to && lo <= site.to + 1) site.to = hi;
      });
      this.loading.set(websiteId, p);
      try {
        await p;
      } catch (e) {
        this.drop(websiteId);
        throw e;
      } finally {
        this.loading.delete(websiteId);
      }
      this.recount(websiteId, site);
      // the estimate of the slice was short: the budget holds all the same (the least recently used go, not this one)
      if (this.bytes > this.maxBytes) this.evict(websiteId);
      await yieldToLoop();
    }
  }

  /**
   * What a background slice of SLICE_DAYS days of this website is likely to take: its bytes per day held so far. The
   * background reads a slice only when that fits the budget, so it never pushes other websites out to fill one.
   */
  private sliceBytes(site: SiteFacts): number {
    const days = site.to - site.from + 1;
    return Number.isFinite(days) && days > 0 ? (site.bytes / days) * SLICE_DAYS : 0;
  }

  /** Websites whose other days are being read in the background (tests). */
  get fillingInBackground(): number {
    return this.filling.size;
  }

  private touch(websiteId: string, site: SiteFacts) {
    this.sites.delete(websiteId);
    site.dropped = false;
    this.sites.set(websiteId, site);
  }

  private evict(keep: string) {
    for (const id of this.sites.keys()) {
      if (this.bytes <= this.maxBytes) break;
      if (id === keep) continue;
      this.drop(id);
      this.evictions++;
    }
  }

  /** Drops a website's facts: the next read loads them as after a start (the bench's cold loads). */
  forget(websiteId: string): void {
    this.drop(websiteId);
  }

  /** Bytes of facts held (for /readyz and the bench). */
  get size(): number {
    return this.bytes;
  }

  stats(): FactsCacheStats {
    return { budget_bytes: this.maxBytes, held_bytes: this.bytes, websites_held: this.sites.size, loads: this.loads, evictions: this.evictions };
  }
}
