import type { Knex } from 'knex';
import { codePointCompare } from '../crawlers/hits-index';
import { dayNumber, lowerBound } from '../held-indexes';
import { suggestionIndexOf } from './suggestion-index';
import type { SuggestionsAnswer, SuggestionView } from './views';

export interface SuggestionsRequest {
  /** UTC days, inclusive; absent: unbounded */
  from?: string;
  to?: string;
  min_answers: number;
}

/** Examples listed per name. */
const EXAMPLES = 3;

const uuidOf = (b: Uint8Array, at: number) => {
  const h = Buffer.from(b.buffer, b.byteOffset + at, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/**
 * The names a website's answers put forward in the range that are neither its brand, a tracked competitor (name or
 * identifier) nor dismissed, with at least min_answers answers: most answers first, then the name key (code points,
 * as `collate "C"`). Summed from the website's day rows held in memory (suggestion-index.ts): per name the answers,
 * the first and last answer (the name as written in the first), the examples of the latest days first (at most 3,
 * each day's in the order they came) and the distinct domains, as the day rows read one by one give them.
 */
export async function listSuggestions(db: Knex, websiteId: string, q: SuggestionsRequest): Promise<SuggestionsAnswer> {
  const held = await suggestionIndexOf(db, websiteId);
  if (!held) return { suggestions: [] };
  const { index: x, excluded } = held;
  const first = q.from === undefined ? 0 : lowerBound(x.days, dayNumber(q.from));
  const end = q.to === undefined ? x.days.length : lowerBound(x.days, dayNumber(q.to) + 1);
  const k = x.keys.values.length;
  const answers = new Int32Array(k);
  const firstSeen = new Float64Array(k);
  const lastSeen = new Float64Array(k);
  const name = new Int32Array(k);
  // up to EXAMPLES examples per key: its day's block and the byte where it starts
  const exCount = new Uint8Array(k);
  const exBlock = new Int32Array(k * EXAMPLES);
  const exAt = new Int32Array(k * EXAMPLES);
  const domains: (number[] | undefined)[] = [];
  const seen: number[] = [];
  // the latest day first: examples are taken in that order
  for (let bi = end - 1; bi >= first; bi--) {
    const b = x.blocks[bi];
    const n = b.key.length;
    for (let i = 0; i < n; i++) {
      const key = b.key[i];
      if (answers[key] === 0) {
        seen.push(key);
        firstSeen[key] = b.first[i];
        lastSeen[key] = b.last[i];
        name[key] = b.name[i];
      } else {
        if (b.first[i] < firstSeen[key]) {
          firstSeen[key] = b.first[i];
          name[key] = b.name[i];
        }
        if (b.last[i] > lastSeen[key]) lastSeen[key] = b.last[i];
      }
      answers[key] += b.answers[i];
      for (let e = b.exStart[i]; e < b.exStart[i + 1] && exCount[key] < EXAMPLES; e += 16) {
        const at = key * EXAMPLES + exCount[key]++;
        exBlock[at] = bi;
        exAt[at] = e;
      }
      const d0 = b.domStart[i];
      const d1 = b.domStart[i + 1];
      if (d0 < d1) {
        let ds = domains[key];
        if (!ds) domains[key] = ds = [];
        for (let d = d0; d < d1; d++) if (!ds.includes(b.domainIds[d])) ds.push(b.domainIds[d]);
      }
    }
  }
  const listed = seen.filter((key) => answers[key] >= q.min_answers && !excluded.has(x.keys.values[key]));
  listed.sort((a, b) => answers[b] - answers[a] || codePointCompare(x.keys.values[a], x.keys.values[b]));
  const suggestions = listed.map(
    (key): SuggestionView => ({
      name: x.names.values[name[key]],
      answers: answers[key],
      first_seen: new Date(firstSeen[key]).toISOString(),
      last_seen: new Date(lastSeen[key]).toISOString(),
      example_response_ids: Array.from({ length: exCount[key] }, (_, j) =>
        uuidOf(x.blocks[exBlock[key * EXAMPLES + j]].examples, exAt[key * EXAMPLES + j]),
      ),
      domains: (domains[key] ?? []).map((d) => x.domains.values[d]).sort(codePointCompare),
    }),
  );
  return { suggestions };
}

/** Whether a website's brand or a tracked competitor goes by this key (name or identifier). */
export async function trackedName(db: Knex, websiteId: string, key: string): Promise<boolean> {
  const r = await db.raw('select 1 from rm_suggestion_entities where website_id = ? and ? = any(keys) limit 1', [websiteId, key]);
  return r.rows.length > 0;
}
