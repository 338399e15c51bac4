import type { Knex } from 'knex';
import { codePointCompare } from '../crawlers/hits-index';
import { dayNumber, lowerBound } from '../held-indexes';
import { type SuggestionIndex, suggestionIndexOf } from './suggestion-index';
import type { SuggestionsAnswer, SuggestionView } from './views';

export interface SuggestionsRequest {
  /** UTC days, inclusive; absent: unbounded */
  from?: string;
  to?: string;
  min_answers: number;
}

/** Examples listed per name; the bytes of one (a uuid's text). */
const EXAMPLES = 3;
const UUID = 36;

const P2 = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
const P3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const DAY_MS = 86_400_000;
/** ms since the epoch as Date.toISOString writes it: the day's part made once per read and day. */
function isoOf(t: number, days: Map<number, string>): string {
  const ms = t % DAY_MS;
  if (t < 0 || t >= 253402300800000) return new Date(t).toISOString();
  const d = t - ms;
  let day = days.get(d);
  if (day === undefined) days.set(d, (day = new Date(d).toISOString().slice(0, 11)));
  const s = Math.floor(ms / 1000);
  return `${day}${P2[Math.floor(s / 3600)]}:${P2[Math.floor(s / 60) % 60]}:${P2[s % 60]}.${P3[ms % 1000]}Z`;
}

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
  return { suggestions: sumRange(held.index, held.excluded, q) };
}

/** The listing of the range from a website's held day rows, leaving out the excluded keys. */
export function sumRange(x: SuggestionIndex, excluded: ReadonlySet<string>, q: SuggestionsRequest): SuggestionView[] {
  const first = q.from === undefined ? 0 : lowerBound(x.days, dayNumber(q.from));
  const end = q.to === undefined ? x.days.length : lowerBound(x.days, dayNumber(q.to) + 1);
  const k = x.keys.keys.length;
  const answers = new Int32Array(k);
  const firstSeen = new Float64Array(k);
  const lastSeen = new Float64Array(k);
  const name = new Int32Array(k);
  // up to EXAMPLES examples per key: its day's block and the byte where it starts
  const exCount = new Uint8Array(k);
  const exBlock = new Int32Array(k * EXAMPLES);
  const exAt = new Int32Array(k * EXAMPLES);
  // the first domain of each key (-1: none yet), the others of the few keys with more
  const domain = new Int32Array(k).fill(-1);
  const moreDomains = new Map<number, number[]>();
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
      for (let e = b.exStart[i]; e < b.exStart[i + 1] && exCount[key] < EXAMPLES; e += UUID) {
        const at = key * EXAMPLES + exCount[key]++;
        exBlock[at] = bi;
        exAt[at] = e;
      }
      for (let d = b.domStart[i]; d < b.domStart[i + 1]; d++) {
        const id = b.domainIds[d];
        if (domain[key] === -1) domain[key] = id;
        else if (domain[key] !== id) {
          const more = moreDomains.get(key);
          if (!more) moreDomains.set(key, [id]);
          else if (!more.includes(id)) more.push(id);
        }
      }
    }
  }
  const listed = seen.filter((key) => answers[key] >= q.min_answers && !excluded.has(x.keys.keys[key]));
  listed.sort((a, b) => answers[b] - answers[a] || codePointCompare(x.keys.keys[a], x.keys.keys[b]));
  const isoDays = new Map<number, string>();
  const out: SuggestionView[] = new Array(listed.length);
  for (let i = 0; i < listed.length; i++) {
    const key = listed[i];
    const examples: string[] = [];
    for (let j = key * EXAMPLES, e = j + exCount[key]; j < e; j++)
      examples.push(x.blocks[exBlock[j]].examples.toString('latin1', exAt[j], exAt[j] + UUID));
    const more = moreDomains.get(key);
    const domains = domain[key] === -1 ? [] : [x.domains.keys[domain[key]]];
    if (more) {
      for (const d of more) domains.push(x.domains.keys[d]);
      domains.sort(codePointCompare);
    }
    out[i] = {
      name: x.names.keys[name[key]],
      answers: answers[key],
      first_seen: isoOf(firstSeen[key], isoDays),
      last_seen: isoOf(lastSeen[key], isoDays),
      example_response_ids: examples,
      domains,
    };
  }
  return out;
}

/** Whether a website's brand or a tracked competitor goes by this key (name or identifier). */
export async function trackedName(db: Knex, websiteId: string, key: string): Promise<boolean> {
  const r = await db.raw('select 1 from rm_suggestion_entities where website_id = ? and ? = any(keys) limit 1', [websiteId, key]);
  return r.rows.length > 0;
}

/**
 * Of the names `keys`, those a website's answers put forward at least `atLeast` times so far that are neither
 * announced, dismissed nor tracked: each with its answers and its first spelling.
 */
export async function namesToAnnounce(
  db: Knex,
  websiteId: string,
  keys: readonly string[],
  atLeast: number,
): Promise<{ key: string; name: string; answers: number }[]> {
  const r = await db.raw(
    `select d.key, sum(d.answers)::int as answers, (array_agg(d.name order by d.first_seen))[1] as name
       from rm_suggestion_days d
      where d.website_id = ? and d.key = any(?)
        and not exists (select 1 from rm_suggestion_announced a where a.website_id = d.website_id and a.key = d.key)
        and not exists (select 1 from rm_suggestion_dismissed x where x.website_id = d.website_id and x.key = d.key)
        and not exists (select 1 from rm_suggestion_entities e where e.website_id = d.website_id and d.key = any(e.keys))
      group by d.key having sum(d.answers) >= ?`,
    [websiteId, [...keys], atLeast],
  );
  return r.rows;
}
