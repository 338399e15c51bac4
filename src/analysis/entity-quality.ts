import { extractUrls, hostOf } from '../domain/urls';

/** A name an answer puts forward (CONTRACT "Competitor suggestions"), with its case-insensitive key. */
export interface PutForward {
  key: string;
  name: string;
}

const BOLD = /\*\*([^*\n]+?)\*\*/g;
const LIST_ITEM = /^[ \t]*(?:\d+\.|[-*])[ \t]+(.+)$/gm;
const LEAD_END = / - | – | — |[:(,]/;
const FIRST_WORD = /^[\p{Lu}\d]/u;

/** The key names are compared by: NFKC, lower case, inner spacing collapsed. */
export const nameKey = (name: string) => name.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

function candidate(raw: string): PutForward | null {
  const name = raw.replace(/\*\*/g, '').replace(/\s+/g, ' ').trim();
  if (!name) return null;
  const words = name.split(' ');
  if (words.length > 5 || !FIRST_WORD.test(words[0])) return null;
  return { key: nameKey(name), name };
}

/** The names an answer puts forward, each once (first spelling kept): bold spans and list items' leads. */
export function namesPutForward(text: string): PutForward[] {
  const out = new Map<string, PutForward>();
  const add = (c: PutForward | null) => {
    if (c && !out.has(c.key)) out.set(c.key, c);
  };
  for (const m of text.matchAll(BOLD)) add(candidate(m[1]));
  for (const m of text.matchAll(LIST_ITEM)) {
    const item = m[1];
    const end = item.search(LEAD_END);
    add(candidate(end === -1 ? item : item.slice(0, end)));
  }
  return [...out.values()];
}

const named = new WeakMap<object, PutForward[]>();
/**
 * namesPutForward of an answer's text, found once per answer object: the suggestions read model and the fact judge's
 * announcer are handed the same decoded event by the shared feed.
 */
export function answerNamesPutForward(answer: { text: string }): PutForward[] {
  let names = named.get(answer);
  if (!names) named.set(answer, (names = namesPutForward(answer.text)));
  return names;
}

/** The hosts an answer cites (its citations and the URLs in its text), lower case without `www.`. */
export function citedHosts(citations: readonly string[], text: string): string[] {
  const hosts = new Set<string>();
  for (const u of [...citations, ...extractUrls(text)]) {
    const h = hostOf(u);
    if (h) hosts.add(h);
  }
  return [...hosts];
}

const alnum = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/** The hosts whose first label, letters and digits only, equals the name's letters and digits. */
export function hostsNaming(name: string, hosts: readonly string[]): string[] {
  const want = alnum(name);
  if (!want) return [];
  return hosts.filter((h) => alnum(h.split('.')[0]) === want);
}

/** A fact conflict the simulated judge finds: the answer's sentence and the fact it contradicts. */
export interface JudgedConflict {
  fact_id: string;
  excerpt: string;
}

const WORD = /\p{L}+/gu;
const NUMBER = /\d+(?:\.\d+)?/g;
const SENTENCE_END = /(?<=[.!?])\s+|\n+/;

const longWords = (s: string) => new Set([...s.matchAll(WORD)].map((m) => m[0].toLowerCase()).filter((w) => w.length >= 4));
const numbers = (s: string) => new Set([...s.matchAll(NUMBER)].map((m) => m[0]));

/** The answer's sentences, split after . ! ? followed by a space, and at line ends. */
export function sentences(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Whether a sentence names the brand: one of its names as a whole word, case-insensitively. */
export function namesBrand(sentence: string, brandNames: readonly string[]): boolean {
  const lower = sentence.toLowerCase();
  return brandNames.some((n) => {
    const name = n.toLowerCase().trim();
    if (!name) return false;
    for (let i = lower.indexOf(name); i !== -1; i = lower.indexOf(name, i + 1)) {
      const before = lower[i - 1];
      const after = lower[i + name.length];
      if ((!before || !/[\p{L}\p{N}]/u.test(before)) && (!after || !/[\p{L}\p{N}]/u.test(after))) return true;
    }
    return false;
  });
}

/** A fact as the simulated judge compares it: its long words and numbers, made once per list of facts. */
export interface PreparedFact {
  id: string;
  words: Set<string>;
  numbers: Set<string>;
}

/** The facts the simulated judge can find a conflict with (a number and two long words at least), prepared. */
export const prepareFacts = (facts: readonly { id: string; text: string }[]): PreparedFact[] =>
  facts.map((f) => ({ id: f.id, words: longWords(f.text), numbers: numbers(f.text) })).filter((f) => f.numbers.size > 0 && f.words.size >= 2);

/**
 * CONTRACT's simulated judge: a sentence naming the brand that shares at least two words of four letters or more
 * with a fact and holds a number the fact does not (the fact holding at least one) conflicts with that fact; one
 * conflict per fact, the first such sentence.
 */
export function judgeSimulated(text: string, brandNames: readonly string[], facts: readonly { id: string; text: string }[]): JudgedConflict[] {
  return judgePrepared(text, brandNames, prepareFacts(facts));
}

/** judgeSimulated against facts prepared by prepareFacts. */
export function judgePrepared(text: string, brandNames: readonly string[], ready: readonly PreparedFact[]): JudgedConflict[] {
  if (!ready.length) return [];
  const out = new Map<string, JudgedConflict>();
  for (const s of sentences(text)) {
    if (!namesBrand(s, brandNames)) continue;
    const words = longWords(s);
    const nums = numbers(s);
    if (!nums.size) continue;
    for (const f of ready) {
      if (out.has(f.id)) continue;
      let shared = 0;
      for (const w of words) if (f.words.has(w) && ++shared >= 2) break;
      if (shared < 2) continue;
      if ([...nums].some((n) => !f.numbers.has(n))) out.set(f.id, { fact_id: f.id, excerpt: s });
    }
  }
  return [...out.values()];
}
