import type { Knex } from 'knex';
import { decodeFacts, type FactDictionaries } from '../../src/analysis/facts';
import { Dictionary, dayNumber } from '../metrics/facts/layout';

/** A website's shopping cards held column by column in this process, checked against the website's version on every read (rules: docs/architecture.md#shopping-cards-in-memory) */

/** Answer rows of one stored part of a day (the denominators). */
export interface AnswerPart {
  day: number;
  part: number;
  n: number;
  /** milliseconds since the day's UTC midnight */
  t: Uint32Array;
  schedule: Uint16Array;
  prompt: Uint16Array;
  model: Uint16Array;
  bytes: number;
}

/** The cards of one UTC day, the cards of one answer next to each other (in the answer's card order). */
export interface CardDay {
  day: number;
  n: number;
  /** a number per answer of the day, the same for its cards (0, 1, 2, …) */
  answer: Uint32Array;
  t: Uint32Array;
  schedule: Uint16Array;
  prompt: Uint16Array;
  model: Uint16Array;
  position: Int32Array;
  /** name and brand (-1: none) in the labels dictionary */
  name: Int32Array;
  brand: Int32Array;
  /** merchant key (-1: none) in the merchant keys dictionary; merchant name (-1: none) in the merchants dictionary */
  merchantKey: Int32Array;
  merchant: Int32Array;
  /** NaN: no price */
  price: Float64Array;
  currency: Int32Array;
  entity: Int32Array;
  own: Uint8Array;
  product: Int32Array;
  /** product and entity (ShoppingSite.pairs) */
  pair: Int32Array;
  /** merchant key and merchant name (ShoppingSite.merchantPairs; -1: either is missing) */
  merchantPair: Int32Array;
  bytes: number;
  /** the day's card indices grouped by pair (built when a top product's cards are first read: ./fast pairCards) */
  byPair?: { pairs: Int32Array; start: Int32Array; idx: Int32Array };
}

export interface ShoppingSite {
  websiteId: string;
  version: bigint;
  generation: bigint;
  table: string;
  /** answer parts by `day:part` */
  parts: Map<string, AnswerPart>;
  /** the same parts by day number */
  partsByDay: Map<number, AnswerPart[]>;
  /** card days by day number */
  cards: Map<number, CardDay>;
  schedules: Dictionary<string | null>;
  prompts: Dictionary<string>;
  models: Dictionary<string>;
  /** product names and brands (what target identifiers are matched against) */
  labels: Dictionary<string>;
  merchants: Dictionary<string>;
  merchantKeys: Dictionary<string>;
  currencies: Dictionary<string>;
  entities: Dictionary<string>;
  products: Dictionary<string>;
  /** (product, entity) pairs: what a top product is, per side */
  pairs: Dictionary<string>;
  pairProduct: number[];
  /** -1: a card without an entity */
  pairEntity: number[];
  /** (merchant key, merchant name) pairs: which name a merchant key is written with most */
  merchantPairs: Dictionary<string>;
  merchantPairOf: [number, number][];
  /** per target pattern: which labels match it (as Postgres's ~* says), for the first `checked` labels */
  targets: Map<string, { checked: number; match: Uint8Array }>;
  /** every price a card holds (what a median over several day-range rollups is searched among: ./rollups) */
  priceSet: Set<number>;
  priceSorted: Float64Array | null;
  /** day-range rollups of the cards per selection family (./rollups); a changed day drops the ranges holding it */
  rollups: Map<string, Map<number, unknown>>;
  rollupBytes: number;
  bytes: number;
}

/** The labels dictionary starts with '' (what a card without a brand is matched as): EMPTY_LABEL. */
export const EMPTY_LABEL = 0;
const emptyFirst = () => {
  const d = new Dictionary<string>();
  d.of('');
  return d;
};

export const emptySite = (websiteId: string, version: bigint, generation: bigint, table: string): ShoppingSite => ({
  websiteId,
  version,
  generation,
  table,
  parts: new Map(),
  partsByDay: new Map(),
  cards: new Map(),
  schedules: new Dictionary(),
  prompts: new Dictionary(),
  models: new Dictionary(),
  labels: emptyFirst(),
  merchants: new Dictionary(),
  merchantKeys: new Dictionary(),
  currencies: new Dictionary(),
  entities: new Dictionary(),
  products: new Dictionary(),
  pairs: new Dictionary(),
  pairProduct: [],
  pairEntity: [],
  merchantPairs: new Dictionary(),
  merchantPairOf: [],
  targets: new Map(),
  priceSet: new Set(),
  priceSorted: null,
  rollups: new Map(),
  rollupBytes: 0,
  bytes: 0,
});

interface ChunkRow {
  day: string;
  part: number;
  meta: FactDictionaries & { n: number };
  data: Buffer;
}

/** A card as read: json_build_array of CARD_FIELDS. */
type CardRow = [
  number, // ms since the day's UTC midnight
  string, // response_id
  string | null, // schedule_id
  string, // prompt_id
  string, // model
  number, // position
  string, // name
  string | null, // brand
  string | null, // merchant
  string | null, // merchant_key
  number | null, // price
  string | null, // currency
  string | null, // entity_id
  boolean, // is_own
  string, // product_key
];

const CARD_FIELDS = `floor(extract(epoch from p.run_at) * 1000)::bigint % 86400000, p.response_id, p.schedule_id, p.prompt_id, p.model,
  p.position, p.name, p.brand, p.merchant, p.merchant_key, p.price, p.currency, p.entity_id, p.is_own, p.product_key`;

function answerPart(site: ShoppingSite, day: number, part: number, r: ChunkRow): AnswerPart {
  const c = decodeFacts(r.meta, r.data);
  const map = <K>(local: ArrayLike<number>, keys: readonly K[], dict: Dictionary<K>) => {
    const m = keys.map((k) => dict.of(k));
    const out = new Uint16Array(local.length);
    for (let i = 0; i < local.length; i++) out[i] = m[local[i]];
    return out;
  };
  return {
    day,
    part,
    n: c.n,
    t: Uint32Array.from(c.t),
    schedule: map(c.schedule, c.schedules, site.schedules),
    prompt: map(c.prompt, c.prompts, site.prompts),
    model: map(c.model, c.models, site.models),
    bytes: c.n * 10 + 100,
  };
}

/** One day's cards (each answer's cards together, in card order) as columns. */
export function cardDay(site: ShoppingSite, day: number, rows: CardRow[]): CardDay {
  const n = rows.length;
  const d: CardDay = {
    day,
    n,
    answer: new Uint32Array(n),
    t: new Uint32Array(n),
    schedule: new Uint16Array(n),
    prompt: new Uint16Array(n),
    model: new Uint16Array(n),
    position: new Int32Array(n),
    name: new Int32Array(n),
    brand: new Int32Array(n),
    merchantKey: new Int32Array(n),
    merchant: new Int32Array(n),
    price: new Float64Array(n),
    currency: new Int32Array(n),
    entity: new Int32Array(n),
    own: new Uint8Array(n),
    product: new Int32Array(n),
    pair: new Int32Array(n),
    merchantPair: new Int32Array(n),
    bytes: n * 74 + 200,
  };
  const opt = (v: string | null, dict: Dictionary<string>) => (v === null ? -1 : dict.of(v));
  let answer = -1;
  let last = '';
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    if (r[1] !== last) {
      answer++;
      last = r[1];
    }
    d.answer[i] = answer;
    d.t[i] = r[0];
    d.schedule[i] = site.schedules.of(r[2]);
    d.prompt[i] = site.prompts.of(r[3]);
    d.model[i] = site.models.of(r[4]);
    d.position[i] = r[5];
    d.name[i] = site.labels.of(r[6]);
    d.brand[i] = opt(r[7], site.labels);
    d.merchant[i] = opt(r[8], site.merchants);
    d.merchantKey[i] = opt(r[9], site.merchantKeys);
    d.price[i] = r[10] === null ? Number.NaN : r[10];
    if (r[10] !== null && !site.priceSet.has(r[10])) {
      site.priceSet.add(r[10]);
      site.priceSorted = null;
    }
    d.currency[i] = opt(r[11], site.currencies);
    d.entity[i] = opt(r[12], site.entities);
    d.own[i] = r[13] ? 1 : 0;
    d.product[i] = site.products.of(r[14]);
    const pair = `${d.product[i]}:${d.entity[i]}`;
    let p = site.pairs.get(pair);
    if (p === undefined) {
      p = site.pairs.of(pair);
      site.pairProduct.push(d.product[i]);
      site.pairEntity.push(d.entity[i]);
    }
    d.pair[i] = p;
    if (d.merchantKey[i] >= 0 && d.merchant[i] >= 0) {
      const named = `${d.merchantKey[i]}:${d.merchant[i]}`;
      let m = site.merchantPairs.get(named);
      if (m === undefined) {
        m = site.merchantPairs.of(named);
        site.merchantPairOf.push([d.merchantKey[i], d.merchant[i]]);
      }
      d.merchantPair[i] = m;
    } else d.merchantPair[i] = -1;
  }
  return d;
}

/** Drops every rollup range holding `day` (keys of ./rollups: level << 24 | day >> level). */
export function dropRollupDay(site: ShoppingSite, day: number): void {
  for (const nodes of site.rollups.values())
    for (let level = 0; level <= ROLLUP_LEVELS; level++) {
      const key = level * 2 ** 24 + Math.floor(day / 2 ** level);
      const node = nodes.get(key) as { bytes: number } | undefined;
      if (node) {
        site.rollupBytes -= node.bytes;
        nodes.delete(key);
      }
    }
}

/** The longest rollup range is 2^ROLLUP_LEVELS days. */
export const ROLLUP_LEVELS = 9;

interface Head {
  version: string;
  generation: string;
  table: string;
}

export class ShoppingCache {
  private readonly sites = new Map<string, ShoppingSite>();
  private readonly loading = new Map<string, Promise<ShoppingSite>>();
  private bytes = 0;

  constructor(private readonly maxBytes = 256 * 1024 * 1024) {}

  /** The website's cards and answers as the read model holds them now; null for a website without a version row. */
  async get(db: Knex, websiteId: string): Promise<ShoppingSite | null> {
    const head: Head | undefined = (
      await db.raw(
        `select version::text as version, generation::text as generation, tableoid::text as "table" from rm_fact_sites where website_id = ?`,
        [websiteId],
      )
    ).rows[0];
    if (!head) return null;
    const version = BigInt(head.version);
    const generation = BigInt(head.generation);
    const held = this.sites.get(websiteId);
    if (held && held.version >= version && held.generation === generation && held.table === head.table) {
      this.sites.delete(websiteId);
      this.sites.set(websiteId, held);
      return held;
    }
    // one refresh per website at a time; a request that arrives meanwhile waits for it, then reads the version again
    const going = this.loading.get(websiteId);
    if (going) {
      await going.catch(() => undefined);
      return this.get(db, websiteId);
    }
    const p = this.refresh(db, websiteId, version, generation, head.table, held);
    this.loading.set(websiteId, p);
    try {
      return await p;
    } finally {
      this.loading.delete(websiteId);
    }
  }

  private async refresh(
    db: Knex,
    websiteId: string,
    version: bigint,
    generation: bigint,
    table: string,
    held: ShoppingSite | undefined,
  ): Promise<ShoppingSite> {
    const whole = !held || held.generation !== generation || held.table !== table;
    const site = whole ? emptySite(websiteId, version, generation, table) : held;
    const since = whole ? null : held.version.toString();
    // the changed chunks and the cards of their days from one snapshot: what is loaded is one state of the read model
    const { chunks, cards } = await db.transaction(
      async (trx) => {
        const chunks: ChunkRow[] = (
          await trx.raw(
            `select day::text as day, part, meta, data from rm_fact_chunks where website_id = ?${since ? ' and version > ?' : ''}`,
            since ? [websiteId, since] : [websiteId],
          )
        ).rows;
        const days = [...new Set(chunks.map((c) => c.day))];
        const cards: { day: string; cards: CardRow[] | string }[] = days.length
          ? (
              await trx.raw(
                `select d.day::text as day, json_agg(json_build_array(${CARD_FIELDS}) order by p.response_id, p.idx) as cards
                   from unnest(?::date[]) d(day)
                   join rm_response_products p on p.website_id = ?
                    and p.run_at >= (d.day::timestamp at time zone 'UTC') and p.run_at < ((d.day + 1)::timestamp at time zone 'UTC')
                  group by d.day`,
                [days as unknown as Knex.RawBinding, websiteId],
              )
            ).rows
          : [];
        return { chunks, cards };
      },
      { isolationLevel: 'repeatable read', readOnly: true },
    );
    for (const c of chunks) {
      const day = dayNumber(c.day);
      const key = `${c.day}:${c.part}`;
      const before = site.parts.get(key);
      if (before) site.bytes -= before.bytes;
      const part = answerPart(site, day, c.part, c);
      site.parts.set(key, part);
      const ofDay = (site.partsByDay.get(day) ?? []).filter((p) => p.part !== c.part);
      ofDay.push(part);
      site.partsByDay.set(day, ofDay);
      site.bytes += part.bytes;
      // the rollups over this day are stale
      dropRollupDay(site, day);
      // every card of a changed day is read again (a day without cards has none any more)
      const beforeCards = site.cards.get(day);
      if (beforeCards) {
        site.bytes -= beforeCards.bytes;
        site.cards.delete(day);
      }
    }
    for (const r of cards) {
      const day = dayNumber(r.day);
      const d = cardDay(site, day, typeof r.cards === 'string' ? JSON.parse(r.cards) : r.cards);
      site.cards.set(day, d);
      site.bytes += d.bytes;
    }
    site.version = version;
    if (held) this.bytes -= held.bytes;
    this.sites.delete(websiteId);
    this.sites.set(websiteId, site);
    this.bytes += site.bytes;
    for (const [id, s] of this.sites) {
      if (this.bytes <= this.maxBytes) break;
      if (id === websiteId) continue;
      this.sites.delete(id);
      this.bytes -= s.bytes;
    }
    return site;
  }

  /** Bytes held. */
  get size(): number {
    return this.bytes;
  }
}

/** Which labels (product names and brands) hold one of the target identifiers, as Postgres's `~*` matches `pattern`. */
export async function targetMatches(db: Knex, site: ShoppingSite, pattern: string): Promise<Uint8Array> {
  let m = site.targets.get(pattern);
  const labels = site.labels.keys;
  if (m && m.checked === labels.length) return m.match;
  const from = m?.checked ?? 0;
  const upto = labels.length;
  const fresh: boolean[] = (
    await db.raw(`select (l ~* ?) as m from unnest(?::text[]) with ordinality x(l, i) order by i`, [pattern, labels.slice(from, upto)])
  ).rows.map((r: { m: boolean }) => r.m);
  const match = new Uint8Array(upto);
  if (m) match.set(m.match.subarray(0, from));
  for (let i = 0; i < fresh.length; i++) match[from + i] = fresh[i] ? 1 : 0;
  m = { checked: upto, match };
  site.targets.set(pattern, m);
  if (site.targets.size > 64) site.targets.delete(site.targets.keys().next().value as string);
  return match;
}
