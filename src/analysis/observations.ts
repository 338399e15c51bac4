/**
 * Attribute observations of one answer: what the answer says about one entity (the brand or a
 * competitor) for one attribute (a trait the website watches: "Price", "Support", …), praising
 * (positive) or criticizing, and how strongly. Pure and deterministic: the worker calls it for every
 * answer, with the entities (./answer, compileEntities) and the attributes (compileAttributes)
 * compiled once per catalogue version.
 *
 * Rules, per sentence (split at . ! ? followed by a space, at line breaks and list items; `e.g.`,
 * `vs.`, `Inc.` and initials do not end one; questions, and quoted questions such as an echoed
 * prompt `… to "Is Acme worth the price?"`, are skipped):
 * - Clauses: a sentence is cut before a contrast marker (but, however, though, although, whereas,
 *   yet, …; `yet`/`while`/`whereas` only after a comma), before `except`/`apart from`/`despite`, at
 *   `;`, and at `, and` when both sides say something. A sentence opening with a subordinating
 *   marker (`Although …,` `Despite …,` `While …,`) is cut at its first comma. Each clause carries its
 *   own polarity: "Acme stands out for support, though pricing can be a concern" praises Acme's
 *   support and (mildly) criticizes its price.
 * - Entities: those a clause names, found by the entity matcher (./matcher; names, identifiers and
 *   domains as whole words), except the baseline of a comparison ("compared with Y", "than Y",
 *   "unlike Y", "an alternative to Y" up to the next comma): "Compared with Y, X offers better
 *   support" is about X only. Every entity a clause names gets the statement. A clause naming none
 *   takes those of the nearest clause of its sentence that names some (previous first); a sentence
 *   naming none takes those of the previous sentence when it opens with a pronoun (it, its, they,
 *   their …) and that sentence has exactly one subject, and a list item (`-`, `*`, `•`) takes the
 *   single entity of its parent line (a less indented or numbered item, a heading, or a line that
 *   does not end with . ! ?): "1. **Acme**\n   - great support" is about Acme.
 * - Attributes: an attribute is talked about where one of its terms occurs (whole words,
 *   case-insensitive, longest first; see compileAttributes).
 * - Polarity: a lexicon of praise (recommended, stands out, solid, good, great, best, excellent,
 *   affordable, reliable, worth a look, …) and criticism (concern, expensive, poor, slow, lacking,
 *   complaints, drawback, limited, …) words and phrases. A negator (not, no, never, isn't, doesn't,
 *   without, lacks, …) flips a cue starting at most two words after it (and weakens it: x 0.7);
 *   `lacks`, `lack of`, `without`, `no` followed by no cue criticize on their own. Cues inside a
 *   condition (`if …,` `when …`) or inside a comparison baseline are ignored. For each attribute
 *   term the nearest cue decides, preferring cues in the same segment (segments are delimited by
 *   commas, colons, dashes, parentheses and by `and`/`with`/`plus`), then any cue of the clause; a
 *   clause opened by `except`/`despite` without a cue of its own takes the opposite of its main
 *   clause, at 0.3. No cue, no observation.
 * - Magnitude: the cue's strength (plain 0.6; best/excellent/terrible 0.9; great 0.8; decent/worth a
 *   look 0.4); an intensifier at most one word before the cue (very, highly, most, too, …) lifts it
 *   to at least 0.9 (extremely, exceptionally, by far: 1.0); a hedge anywhere in the clause (can be,
 *   may, might, somewhat, a bit, slightly, tends to, sometimes, minor, …) halves it. Clamped to
 *   [0.1, 1]; score = sign x magnitude, rounded to 3 decimals.
 * - At most one observation per (entity, attribute, sentence): agreeing statements keep the
 *   strongest; opposite ones net out (praise 0.6 and criticism 0.3 give +0.3), and a net below 0.1
 *   gives none. text_span is the sentence, trimmed, at most 500 characters (list markers excluded);
 *   it is always a substring of the text (of its NFC form when entity names need that, as in
 *   ./answer). Output in text order: by sentence, then attribute term, then entity position.
 * - Words of an entity's name or domain that are lexicon or attribute words ("Best Buy",
 *   "Support.com") are not read as cues or terms. Identifiers are not masked that way.
 */
import type { CompiledEntities } from './answer';
import { fold } from './matcher';

export interface AttributeInput {
  id: string;
  name: string;
  description?: string | null;
}

export interface ExtractedObservation {
  entity_id: string;
  attribute_id: string;
  /** true: the answer praises the entity for the attribute; false: it criticizes it */
  positive: boolean;
  /** -1..1, sign equal to `positive`, magnitude 0.1..1 = strength of wording; null when no valid value */
  score: number | null;
  /** the supporting excerpt (here: the sentence) */
  text_span: string;
}

// ---- scores ----

/** A finite number whose magnitude is in [0.1, 1] and whose sign matches `positive`. */
export function isValidScore(positive: boolean, score: unknown): score is number {
  if (typeof score !== 'number' || !Number.isFinite(score)) return false;
  const m = Math.abs(score);
  if (m < 0.1 || m > 1) return false;
  return positive ? score > 0 : score < 0;
}

/** The score rounded to 3 decimals when valid (isValidScore), else null. */
export function normalizeScore(positive: boolean, score: unknown): number | null {
  if (!isValidScore(positive, score)) return null;
  const r = Math.round(Math.abs(score) * 1000) / 1000;
  return positive ? r : -r;
}

// ---- lexicon ----

const K_CUE = 1;
const K_NEG = 2;
const K_INT = 3;
const K_HEDGE = 4;
const K_CONTRAST = 5;
const K_EXCEPT = 6;
const K_BASELINE = 7;
const K_COND = 8;
const K_JOIN = 9;
const K_NOOP = 10;

interface Lex {
  kind: number;
  /** CUE: signed strength; NEG: signed strength when it stands alone (0: it only flips); INT: the level it lifts a cue to */
  w: number;
  /** CONTRAST/EXCEPT: opening a sentence, the clause runs to the first comma */
  sub: boolean;
  /** CONTRAST: cuts only right after a comma */
  afterComma: boolean;
  /** NEG: also a hedge (`not always`) */
  hedge: boolean;
}

const lex = (kind: number, w = 0, sub = false, afterComma = false, hedge = false): Lex => ({ kind, w, sub, afterComma, hedge });

const POSITIVE: Record<number, string> = {
  0.9: 'best|excellent|outstanding|exceptional|superb|fantastic|amazing|top notch|world class|flawless|perfect|best in class|unbeatable|unmatched|highly rated|top rated|worth every penny|second to none|industry leading',
  0.8: 'great|impressive|excels|excel|love|loves|loved|great value',
  0.7: 'shines|shine|ideal',
  0.6:
    'recommended|recommend|recommends|recommending|stands out|stand out|standout|solid|good|strong|reliable|dependable|trusted|trustworthy|' +
    'affordable|inexpensive|cheaper|cheapest|low cost|low price|low prices|low priced|reasonably priced|competitively priced|reasonable|fair|' +
    'competitive|transparent|intuitive|easy|easy to use|user friendly|helpful|responsive|knowledgeable|attentive|fast|quick|speedy|smooth|' +
    'robust|secure|praised|praise|praises|favorite|favourite|preferred|better|well regarded|well designed|well made|well built|' +
    'well documented|well reviewed|well rated|works well|work well|efficient|durable|sturdy|long lasting|high quality|top quality|generous|' +
    'flexible|powerful|comprehensive|feature rich|seamless|seamlessly|bargain|budget friendly|strength|strengths|advantage|advantages|' +
    'worth it|worth the price|worth the money|hassle free|bug free|top choice|top pick|wins',
  0.5: 'cheap|friendly|safe|simple|leading|beats|pros|mostly positive',
  0.4: 'worth a look|worth considering|worth a try|worth checking out|worth|decent|okay|adequate|acceptable|point to|points to|popular',
};

const NEGATIVE: Record<number, string> = {
  0.9: 'terrible|awful|horrible|worst|unusable|abysmal|horrendous|useless|nightmare|scam|rip off',
  0.8: 'overpriced|over priced|way too expensive',
  0.6:
    'concern|concerns|concerning|expensive|pricey|costly|high price|high prices|high cost|high costs|high fees|hidden fees|hidden costs|' +
    'poor|poorly|slow|sluggish|laggy|lags|complaints|complaint|complain|complains|complained|drawback|drawbacks|downside|downsides|bad|' +
    'worse|weak|weakness|weaknesses|buggy|bugs|glitchy|glitches|issues|issue|problem|problems|problematic|unreliable|unresponsive|' +
    'unhelpful|rude|confusing|complicated|clunky|cumbersome|difficult|hard to|steep|frustrating|frustration|frustrated|criticized|' +
    'criticised|criticism|criticisms|inconsistent|outdated|delays|delayed|crashes|crash|crashing|broken|fails|failures|lackluster|' +
    'limited|limitation|limitations|disappointing|disappointed|disappoints|struggles|struggle|falls short|fall short|lags behind|' +
    'pain point|pain points|letdown|flaky|spotty|unstable|insecure|vulnerable|vulnerabilities|breach|breaches|downtime|outage|outages|' +
    'shortcoming|shortcomings|negative reviews',
  0.5: 'mediocre|underwhelming',
  0.4: 'cons|learning curve|hit or miss|mixed reviews',
};

const NEGATORS =
  "not|never|isn't|aren't|wasn't|weren't|doesn't|don't|didn't|won't|wouldn't|can't|cannot|couldn't|hasn't|haven't|hadn't|shouldn't|" +
  'isnt|doesnt|dont|cant|hardly|barely|nor|neither|no longer|far from';
const STANDALONE_NEGATORS: Record<string, number> = { without: -0.6, lacks: -0.6, lack: -0.6, 'lack of': -0.6, lacking: -0.6, missing: -0.6, no: -0.5 };
const INTENSIFIERS: Record<number, string> = {
  1: 'extremely|exceptionally|incredibly|absolutely|remarkably|by far|hugely|overwhelmingly|universally',
  0.9: 'very|highly|really|particularly|especially|truly|super|so|too|most|consistently|far|widely|no doubt|without a doubt|very much|genuinely',
};
const HEDGES =
  'somewhat|a bit|a little|slightly|can be|could be|can get|can feel|can seem|may|might|could|sometimes|occasionally|at times|fairly|' +
  'relatively|tends to|tend to|some users|some reviewers|some people|some customers|a few|minor|occasional|a tad|kind of|sort of|' +
  'reportedly|arguably|at best|mostly|rather';
const CONTRASTS: Array<[string, boolean, boolean]> = [
  // [phrase, sub, afterComma]
  ['but', false, false], ['however', false, false], ['nevertheless', false, false], ['nonetheless', false, false],
  ['on the other hand', false, false], ['that said', false, false], ['then again', false, false], ['on the downside', false, false],
  ['on the flip side', false, false], ['yet', false, true], ['though', true, false], ['although', true, false],
  ['even though', true, false], ['even if', true, false], ['whereas', true, true], ['while', true, true],
];
const EXCEPTS = 'except|except for|apart from|aside from|other than|despite|in spite of';
const BASELINES =
  'than|compared with|compared to|in comparison to|in comparison with|unlike|versus|vs|relative to|as opposed to|rather than|' +
  'in contrast to|alternative to|alternatives to';
const CONDITIONS = 'if|when|whenever|in case|as long as|provided|assuming';
const JOINS = 'and|with|plus|as well as|along with';
const NOOPS = 'not only|not just|no matter|not to mention|no wonder|pros and cons|best practices|best practice|as well|on top of|but also|at least';

const PRONOUNS = new Set(['it', 'its', "it's", 'they', 'their', "they're", 'theirs', 'them']);

// ---- attribute synonyms ----

/** Built-in synonym groups: an attribute whose name (or, failing that, description) holds one of a group's terms gets the whole group. */
const GROUPS: readonly string[] = [
  'price|prices|pricing|priced|cost|costs|costly|affordable|affordability|inexpensive|cheap|cheaper|cheapest|expensive|pricey|overpriced|' +
    'value for money|good value|great value|best value|excellent value|solid value|overall value|budget friendly|fee|fees|free plan|free tier|free version|price point|price tag|low cost|hidden fees|hidden costs',
  'support|customer support|customer service|customer care|support team|technical support|tech support|help desk|helpdesk|help center|' +
    'help centre|getting help|live chat|assistance',
  'quality|build quality|reliability|reliable|unreliable|dependable|dependability|durability|durable|sturdy|stability|stable|well made|' +
    'well built|craftsmanship|long lasting',
  'ease of use|easy to use|usability|user friendly|user friendliness|intuitive|learning curve|easy to learn|easy to set up|setup|interface',
  'features|feature|feature set|range of features|functionality|functionalities|capabilities|feature rich',
  'integrations|integration|integrates|integrate|api|apis|plugins|plugin|add ons|connectors|ecosystem',
  'security|secure|insecure|privacy|encryption|compliance|data protection|breach|breaches|vulnerabilities',
  'performance|speed|speedy|performant|latency|lag|laggy|sluggish|load times|loading times|uptime',
  'delivery|deliveries|delivery times|delivery time|shipping|shipment|shipments|shipped|dispatch',
];

/** Words of a name or description that carry no trait of their own. */
const STOPWORDS = new Set(
  (
    'a|an|the|and|or|of|to|for|in|on|at|by|with|from|as|is|are|was|were|be|been|being|it|its|it\'s|this|that|these|those|how|what|which|' +
    'who|whom|whether|when|where|why|well|said|says|say|described|perceived|seen|considered|regarded|thought|product|products|brand|' +
    'brands|company|companies|service|services|offering|offerings|item|items|user|users|customer|customers|people|person|they|their|them|' +
    'our|your|you|we|me|my|he|she|his|her|can|could|would|should|may|might|will|shall|do|does|did|has|have|had|not|no|very|more|most|' +
    'less|least|so|too|also|just|about|into|over|under|than|then|there|here|such|some|any|all|each|every|other|others|overall|general|' +
    'generally|much|many|lot|lots|level|amount|degree|extent|way|ways|thing|things|etc|like|likely|get|gets|getting|make|makes|use|used|' +
    'using|good|bad|great|poor|better|worse|best|worst|high|low|large|small|big|new|old|life|time|times|if|while|though|although|because|' +
    'since|against|versus|vs|one|ones|option|options|choice|choices|tool|tools|its|whose|said|seem|seems|answer|answers|mentioned|talk|' +
    'talks|terms|term|aspect|aspects|trait|traits'
  ).split('|'),
);

// ---- trie of words ----

interface Node {
  lex: Lex | null;
  /** indices of the attributes a term ending here belongs to */
  attrs: number[] | null;
  next: Map<string, Node> | null;
}

const newNode = (): Node => ({ lex: null, attrs: null, next: null });

/** The words of an entity name or domain to blank in texts, and the index of its first trie word. */
interface Mask {
  words: string[];
  anchor: number;
}

function nodeFor(root: Map<string, Node>, words: readonly string[]): Node {
  let node: Node | undefined = root.get(words[0]);
  if (node === undefined) root.set(words[0], (node = newNode()));
  for (let i = 1; i < words.length; i++) {
    let child: Node | undefined = node.next?.get(words[i]);
    if (child === undefined) (node.next ??= new Map()).set(words[i], (child = newNode()));
    node = child;
  }
  return node;
}

const WORDS_RE = /[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu;
/** Lower-cased words as the tokenizer sees them (compile time only). */
function wordsOf(s: string): string[] {
  return s.toLowerCase().replace(/[\u2019\u2018]/g, "'").match(WORDS_RE) ?? [];
}

const LEXICON = new Map<string, Lex>();
{
  const put = (phrases: string, entry: Lex) => {
    for (const p of phrases.split('|')) LEXICON.set(wordsOf(p).join(' '), entry);
  };
  for (const [w, ps] of Object.entries(POSITIVE)) put(ps, lex(K_CUE, Number(w)));
  for (const [w, ps] of Object.entries(NEGATIVE)) put(ps, lex(K_CUE, -Number(w)));
  put(NEGATORS, lex(K_NEG));
  for (const [p, w] of Object.entries(STANDALONE_NEGATORS)) put(p, lex(K_NEG, w));
  put('not always|not consistently', lex(K_NEG, 0, false, false, true));
  for (const [w, ps] of Object.entries(INTENSIFIERS)) put(ps, lex(K_INT, Number(w)));
  put(HEDGES, lex(K_HEDGE));
  for (const [p, sub, afterComma] of CONTRASTS) put(p, lex(K_CONTRAST, 0, sub, afterComma));
  put(EXCEPTS, lex(K_EXCEPT, 0, true));
  put(BASELINES, lex(K_BASELINE));
  put(CONDITIONS, lex(K_COND));
  put(JOINS, lex(K_JOIN));
  put(NOOPS, lex(K_NOOP));
}

const GROUP_TERMS: ReadonlyArray<readonly string[]> = GROUPS.map((g) => g.split('|').map((t) => wordsOf(t).join(' ')));
const ALL_GROUP_TERMS = new Set(GROUP_TERMS.flat());

/** Singular and plural forms of the last word of a term. */
function inflections(term: string): string[] {
  const sp = term.lastIndexOf(' ');
  const head = term.slice(0, sp + 1);
  const w = term.slice(sp + 1);
  const out = [term];
  if (w.length < 3 || /\d/.test(w)) return out;
  if (w.endsWith('ies') && w.length > 4) out.push(`${head}${w.slice(0, -3)}y`);
  else if (/(?:s|x|ch|sh)es$/.test(w)) out.push(head + w.slice(0, -2));
  else if (w.endsWith('s') && !w.endsWith('ss')) out.push(head + w.slice(0, -1));
  else if (/[^aeiou]y$/.test(w)) out.push(`${head}${w.slice(0, -1)}ies`);
  else if (/(?:s|x|ch|sh)$/.test(w)) out.push(`${head}${w}es`);
  else out.push(`${head}${w}s`);
  return out;
}

// ---- compiled attributes ----

const BLOOM_SIZE = 1 << 16;
const BLOOM_MASK = BLOOM_SIZE - 1;
const FNV_BASIS = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;
const bloomIndex = (h: number): number => (h ^ (h >>> 16)) & BLOOM_MASK;

/** The bloom slot of a lower-cased word, hashed as the tokenizer hashes it (ASCII as is, other code units folded). */
function wordHash(w: string): number {
  let h = FNV_BASIS;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    h = Math.imul(h ^ (c < 0x80 ? c : fold(c)), FNV_PRIME);
  }
  return bloomIndex(h);
}

export interface CompiledAttribute {
  id: string;
  name: string;
  /** the lower-cased words and phrases that mean this attribute is talked about */
  terms: readonly string[];
}

/** The attributes of one website catalogue version, compiled for extractObservations. */
export class CompiledAttributes {
  readonly attributes: readonly CompiledAttribute[];
  /** @internal the lexicon and the attribute terms, one trie of words */
  readonly root: Map<string, Node>;
  /** @internal 1 where the hash of a word of the trie (or a pronoun) lands: most words of a text are never looked up */
  readonly bloom = new Uint8Array(BLOOM_SIZE);
  /** @internal per compiled entities: the words of entity names and domains to mask (lexicon or attribute words) */
  readonly masks = new WeakMap<CompiledEntities, Mask[]>();

  constructor(attrs: readonly AttributeInput[]) {
    const root = new Map<string, Node>();
    const words = new Set<string>(PRONOUNS);
    const insert = (phrase: string): Node => {
      const ws = phrase.split(' ');
      for (const w of ws) words.add(w);
      return nodeFor(root, ws);
    };
    for (const [phrase, entry] of LEXICON) insert(phrase).lex = entry;
    const compiled: CompiledAttribute[] = [];
    (attrs ?? []).forEach((a, index) => {
      const terms = termsOf(a);
      compiled.push({ id: a.id, name: a.name, terms });
      for (const t of terms) {
        const node = insert(t);
        if (node.attrs === null) node.attrs = [index];
        else if (!node.attrs.includes(index)) node.attrs.push(index);
      }
    });
    for (const w of words) this.bloom[wordHash(w)] = 1;
    this.attributes = compiled;
    this.root = root;
  }

  /** @internal Word sequences of entity names and domains that hold a lexicon or attribute word. */
  masksFor(entities: CompiledEntities): Mask[] {
    let m = this.masks.get(entities);
    if (m !== undefined) return m;
    m = [];
    for (const e of entities.entities) {
      for (const s of [e.name, e.domain]) {
        if (typeof s !== 'string') continue;
        const words = wordsOf(s);
        const anchor = words.findIndex((w) => this.root.has(w));
        if (anchor !== -1) m.push({ words, anchor });
      }
    }
    this.masks.set(entities, m);
    return m;
  }
}

function termsOf(a: AttributeInput): string[] {
  const terms = new Set<string>();
  const add = (t: string) => {
    if (t === '') return;
    // a built-in synonym lists its own forms (inflecting `support` would add the verb `supports`)
    if (ALL_GROUP_TERMS.has(t)) terms.add(t);
    else for (const f of inflections(t)) terms.add(f);
  };
  const nameWords = wordsOf(typeof a.name === 'string' ? a.name : '');
  const descWords = wordsOf(typeof a.description === 'string' ? a.description : '');
  if (nameWords.length) add(nameWords.join(' '));
  const meaningful = (w: string) => w.length >= 3 && !STOPWORDS.has(w) && (!LEXICON.has(w) || ALL_GROUP_TERMS.has(w));
  for (const w of nameWords) if (meaningful(w)) add(w);
  for (const w of descWords) if (meaningful(w)) add(w);
  // synonym groups: triggered by the name (the whole name, or one of its words), else by the description's words
  const groupsOf = (phrase: string, words: readonly string[]) =>
    GROUP_TERMS.filter((g) => g.includes(phrase) || words.some((w) => !STOPWORDS.has(w) && g.includes(w)));
  let groups = groupsOf(nameWords.join(' '), nameWords);
  if (groups.length === 0) groups = groupsOf('', descWords.filter(meaningful));
  for (const g of groups) for (const t of g) terms.add(t);
  return [...terms];
}

/** Compiles a website's attributes (their names, meaningful description words and built-in synonyms). */
export function compileAttributes(attrs: readonly AttributeInput[]): CompiledAttributes {
  return new CompiledAttributes(attrs);
}

// ---- tokens, sentences and lines ----

/** token flag: punctuation that separates segments before it (, : ; ( ) [ ] | — – and a spaced hyphen) */
const F_BRK = 1;
/** token flag: a semicolon before it (a clause boundary) */
const F_SEMI = 2;

const LINE_NONE = 0;
const LINE_BULLET = 1;
const LINE_NUMBER = 2;
const LINE_HEADING = 3;

const WORD_ASCII = new Uint8Array(128);
for (let c = 48; c <= 57; c++) WORD_ASCII[c] = 1;
for (let c = 65; c <= 90; c++) WORD_ASCII[c] = 1;
for (let c = 97; c <= 122; c++) WORD_ASCII[c] = 1;
/** ASCII word characters lower-cased (what the hash takes), 0 for the others */
const FOLD_ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) if (WORD_ASCII[c] === 1) FOLD_ASCII[c] = c >= 65 && c <= 90 ? c | 0x20 : c;

function isWordUnit(c: number): boolean {
  if (c < 0x80) return WORD_ASCII[c] === 1;
  if (c <= 0xbf) return c === 0xaa || c === 0xb5 || c === 0xba;
  if (c === 0xd7 || c === 0xf7) return false;
  if (c >= 0x2000 && c <= 0x2bff) return false; // punctuation, symbols, arrows, dingbats
  if (c >= 0xd800 && c <= 0xdfff) return false; // emoji and other astral characters
  if ((c >= 0x3000 && c <= 0x303f) || (c >= 0xfe00 && c <= 0xfe0f) || c === 0xfeff || (c >= 0xff00 && c <= 0xff0f)) return false;
  return true;
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 11 || c === 12 || c === 0xa0 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x3000;
}

/** Characters that may follow a sentence's final . ! ? (closing quotes, brackets, markdown emphasis). */
function isCloser(c: number): boolean {
  return c === 34 || c === 39 || c === 41 || c === 93 || c === 42 || c === 95 || c === 96 || c === 0x201d || c === 0x2019 || c === 0xbb;
}

const ABBREVIATIONS = new Set(['inc', 'ltd', 'co', 'corp', 'vs', 'approx', 'dr', 'mr', 'mrs', 'ms', 'st', 'jr', 'sr', 'no', 'nr', 'fig', 'cf']);

function grown<T extends Int32Array | Uint8Array>(a: T, n: number): T {
  if (n < a.length) return a;
  const b = new (a.constructor as { new (n: number): T })(Math.max(n + 1, a.length * 2));
  b.set(a);
  return b;
}

/**
 * One text cut into tokens (words), sentences and lines. A single instance is reused by every call
 * (extractObservations runs to completion without yielding), so its buffers are allocated once.
 */
class Doc {
  text = '';
  /** tokens: start, end, flags, lower-cased word ('' when no trie word can hash there, or masked) */
  nt = 0;
  ts = new Int32Array(512);
  te = new Int32Array(512);
  tf = new Uint8Array(512);
  tw: string[] = [];
  /** per token scratch of the sentence being read: 1 condition, 2 comparison baseline; segment number */
  zone = new Uint8Array(512);
  seg = new Int32Array(512);
  /** sentences: start and end (characters), first token and token end, line, question */
  ns = 0;
  ss = new Int32Array(64);
  se = new Int32Array(64);
  st0 = new Int32Array(64);
  st1 = new Int32Array(64);
  sl = new Int32Array(64);
  sq = new Uint8Array(64);
  /** lines: indent, kind, ends with . ! ?, first sentence and sentence end */
  nl = 0;
  li = new Int32Array(64);
  lk = new Uint8Array(64);
  lterm = new Uint8Array(64);
  ls0 = new Int32Array(64);
  ls1 = new Int32Array(64);

  private sStart = -1;
  private sT0 = 0;
  private flags = 0;

  /** Reads text from `start` (the start of a line: what comes before is left out). */
  load(text: string, bloom: Uint8Array, start: number): void {
    this.text = text;
    this.nt = this.ns = this.nl = 0;
    this.sStart = -1;
    this.sT0 = 0;
    this.flags = 0;
    const n = text.length;
    let atLineStart = true;
    let i = start;
    while (i < n) {
      if (atLineStart) {
        atLineStart = false;
        i = this.lineStart(i);
        continue;
      }
      const c = text.charCodeAt(i);
      const f = c < 0x80 ? FOLD_ASCII[c] : isWordUnit(c) ? fold(c) : 0;
      if (f !== 0) {
        // a word: hash it on the way (as wordHash does) and make a string only when the bloom says it may be in the trie
        let h = Math.imul(FNV_BASIS ^ f, FNV_PRIME);
        let j = i + 1;
        let curly = false;
        while (j < n) {
          const d = text.charCodeAt(j);
          const g = d < 0x80 ? FOLD_ASCII[d] : isWordUnit(d) ? fold(d) : 0;
          if (g !== 0) {
            h = Math.imul(h ^ g, FNV_PRIME);
            j++;
          } else if ((d === 39 || d === 0x2019) && j + 1 < n && isWordUnit(text.charCodeAt(j + 1))) {
            if (d === 0x2019) curly = true;
            h = Math.imul(h ^ 39, FNV_PRIME);
            j++;
          } else break;
        }
        let w = '';
        if (bloom[bloomIndex(h)] === 1) {
          w = text.slice(i, j).toLowerCase();
          if (curly) w = w.replace(/\u2019/g, "'");
        }
        if (this.sStart < 0) this.sStart = i;
        this.token(i, j, w);
        i = j;
        continue;
      }
      switch (c) {
        case 10:
          this.endSentence(i, false);
          this.endLine(i);
          atLineStart = true;
          i++;
          continue;
        case 46:
        case 33:
        case 63: {
          let k = i + 1;
          while (k < n && isCloser(text.charCodeAt(k))) k++;
          if (k >= n || isSpace(text.charCodeAt(k))) {
            if (c !== 46 || !this.abbreviationEndsAt(i)) {
              if (this.sStart < 0) this.sStart = i;
              this.endSentence(k, c === 63);
              i = k;
              continue;
            }
          }
          break;
        }
        case 44:
        case 58:
        case 40:
        case 41:
        case 91:
        case 93:
        case 124:
        case 0x2013:
        case 0x2014:
          this.flags |= F_BRK;
          break;
        case 59:
          this.flags |= F_BRK | F_SEMI;
          break;
        case 45:
          if (i > 0 && isSpace(text.charCodeAt(i - 1)) && (i + 1 >= n || isSpace(text.charCodeAt(i + 1)))) this.flags |= F_BRK;
          break;
      }
      if (this.sStart < 0 && !isSpace(c)) this.sStart = i;
      i++;
    }
    this.endSentence(n, false);
    if (!atLineStart) this.endLine(n);
    if (this.zone.length < this.nt) {
      this.zone = grown(this.zone, this.nt);
      this.seg = grown(this.seg, this.nt);
    }
  }

  /** The lower-cased word of token k, also when the bloom left it out. */
  wordAt(k: number): string {
    return this.tw[k] !== '' ? this.tw[k] : this.text.slice(this.ts[k], this.te[k]).toLowerCase().replace(/\u2019/g, "'");
  }

  private token(i: number, j: number, w: string): void {
    const k = this.nt++;
    if (k >= this.ts.length) {
      this.ts = grown(this.ts, k);
      this.te = grown(this.te, k);
      this.tf = grown(this.tf, k);
    }
    this.ts[k] = i;
    this.te[k] = j;
    this.tf[k] = this.flags;
    this.tw[k] = w;
    this.flags = 0;
  }

  /** `e.g.`, `vs.`, `Inc.`, an initial: a period that ends no sentence. */
  private abbreviationEndsAt(i: number): boolean {
    const last = this.nt - 1;
    if (last < this.sT0 || this.te[last] !== i) return false;
    const len = i - this.ts[last];
    if (len === 1) return WORD_ASCII[this.text.charCodeAt(i - 1)] === 1 && this.text.charCodeAt(i - 1) > 57;
    return len <= 6 && ABBREVIATIONS.has(this.wordAt(last));
  }

  private endSentence(end: number, question: boolean): void {
    if (this.sStart >= 0 && this.nt > this.sT0) {
      const s = this.ns++;
      if (s >= this.ss.length) {
        this.ss = grown(this.ss, s);
        this.se = grown(this.se, s);
        this.st0 = grown(this.st0, s);
        this.st1 = grown(this.st1, s);
        this.sl = grown(this.sl, s);
        this.sq = grown(this.sq, s);
      }
      this.ss[s] = this.sStart;
      this.se[s] = end;
      this.st0[s] = this.sT0;
      this.st1[s] = this.nt;
      this.sl[s] = this.nl - 1;
      this.sq[s] = question ? 1 : 0;
    }
    this.sStart = -1;
    this.sT0 = this.nt;
    this.flags = 0;
  }

  /** Reads a line's indent and list marker; returns the index after them. */
  private lineStart(i: number): number {
    const text = this.text;
    const n = text.length;
    let p = i;
    let indent = 0;
    for (; p < n; p++) {
      const c = text.charCodeAt(p);
      if (c === 32) indent++;
      else if (c === 9) indent += 4;
      else break;
    }
    let kind = LINE_NONE;
    const c = p < n ? text.charCodeAt(p) : 0;
    const d = p + 1 < n ? text.charCodeAt(p + 1) : 32;
    if ((c === 45 || c === 42 || c === 43 || c === 0x2022 || c === 0xb7) && (d === 32 || d === 9)) {
      kind = LINE_BULLET;
      p += 2;
    } else if (c >= 48 && c <= 57) {
      let q = p + 1;
      while (q < n && q - p < 3 && text.charCodeAt(q) >= 48 && text.charCodeAt(q) <= 57) q++;
      const e = q < n ? text.charCodeAt(q) : 0;
      if ((e === 46 || e === 41) && (q + 1 >= n || isSpace(text.charCodeAt(q + 1)))) {
        kind = LINE_NUMBER;
        p = q + 1;
      }
    } else if (c === 35) {
      let q = p;
      while (q < n && text.charCodeAt(q) === 35) q++;
      if (q >= n || text.charCodeAt(q) === 32) {
        kind = LINE_HEADING;
        p = q;
      }
    }
    const l = this.nl++;
    if (l >= this.li.length) {
      this.li = grown(this.li, l);
      this.lk = grown(this.lk, l);
      this.lterm = grown(this.lterm, l);
      this.ls0 = grown(this.ls0, l);
      this.ls1 = grown(this.ls1, l);
    }
    this.li[l] = indent;
    this.lk[l] = kind;
    this.ls0[l] = this.ns;
    this.ls1[l] = this.ns;
    this.lterm[l] = 0;
    return p;
  }

  private endLine(end: number): void {
    const text = this.text;
    let k = end - 1;
    while (k >= 0 && (isSpace(text.charCodeAt(k)) || isCloser(text.charCodeAt(k)))) k--;
    const c = k >= 0 ? text.charCodeAt(k) : 0;
    const l = this.nl - 1;
    this.lterm[l] = c === 46 || c === 33 || c === 63 ? 1 : 0;
    this.ls1[l] = this.ns;
  }

  /** Blanks the words of a quoted question ("Is Acme worth the price?"): an echoed prompt says nothing about anyone. */
  blankQuotedQuestions(): void {
    const text = this.text;
    for (let q = text.indexOf('?'); q !== -1; q = text.indexOf('?', q + 1)) {
      const close = text.charCodeAt(q + 1);
      if (close !== 34 && close !== 0x201d) continue;
      let open = q - 1;
      for (; open >= 0; open--) {
        const c = text.charCodeAt(open);
        if (c === 10 || c === 0x201c || (c === 34 && close === 34)) break;
      }
      if (open < 0 || text.charCodeAt(open) === 10) continue;
      for (let k = 0; k < this.nt; k++) if (this.ts[k] > open && this.ts[k] < q) this.tw[k] = '';
    }
  }

  /**
   * Blanks the words of entity names that hold lexicon or attribute words, wherever the name's words
   * occur in sequence. Candidates are found by the name's first trie word (the only words that have
   * a string here); the others are compared on the text.
   */
  maskNames(masks: readonly Mask[]): void {
    for (const { words, anchor } of masks) {
      const w = words[anchor];
      for (let k = anchor; k + words.length - anchor <= this.nt; k++) {
        if (this.tw[k] !== w) continue;
        const k0 = k - anchor;
        let ok = true;
        // in sequence: no punctuation inside the name, and the other words equal
        for (let q = 1; q < words.length && ok; q++) ok = (this.tf[k0 + q] & F_BRK) === 0;
        for (let q = 0; q < words.length && ok; q++) ok = q === anchor || this.wordAt(k0 + q) === words[q];
        if (ok) for (let q = 0; q < words.length; q++) this.tw[k0 + q] = '';
      }
    }
  }
}

const DOC = new Doc();

// ---- extraction ----

const COMBINING = /[\u0300-\u036f]/;
const EMPTY: number[] = [];

interface Clause {
  k0: number;
  k1: number;
  c0: number;
  c1: number;
  except: boolean;
  /** entities named (baselines excluded) and the index of each one's first occurrence */
  ents: number[];
  pos: number[];
  /** cues: first token, token end, signed magnitude */
  cueK: number[];
  cueEnd: number[];
  cueV: number[];
  /** sum of the cues: the clause's overall polarity */
  net: number;
}

interface Candidate {
  e: number;
  a: number;
  at: number;
  entAt: number;
  pos: number;
  neg: number;
}

/** Hits of the sentence being read (reused). */
const H = {
  /** lexicon hits: first token, token end, entry */
  n: 0,
  k: new Int32Array(128),
  end: new Int32Array(128),
  x: [] as Lex[],
  /** attribute hits: first token, token end, attribute indices */
  na: 0,
  ak: new Int32Array(64),
  aEnd: new Int32Array(64),
  aa: [] as number[][],
};

/** Finds lexicon and attribute terms in tokens [t0, t1) (longest match, each kind on its own). */
function walk(doc: Doc, root: Map<string, Node>, t0: number, t1: number): void {
  const { tw, tf } = doc;
  H.n = H.na = 0;
  let lexNext = t0;
  let attrNext = t0;
  for (let k = t0; k < t1; k++) {
    const w = tw[k];
    if (w === '') continue;
    const node = root.get(w);
    if (node === undefined) continue;
    const wantLex = k >= lexNext;
    const wantAttr = k >= attrNext;
    let bestLex = wantLex ? node.lex : null;
    let bestLexEnd = k + 1;
    let bestAttr = wantAttr ? node.attrs : null;
    let bestAttrEnd = k + 1;
    let cur = node;
    let j = k + 1;
    while (cur.next !== null && j < t1 && (tf[j] & F_BRK) === 0) {
      const nx = cur.next.get(tw[j]);
      if (nx === undefined) break;
      cur = nx;
      j++;
      if (wantLex && cur.lex !== null) {
        bestLex = cur.lex;
        bestLexEnd = j;
      }
      if (wantAttr && cur.attrs !== null) {
        bestAttr = cur.attrs;
        bestAttrEnd = j;
      }
    }
    if (bestLex !== null) {
      if (H.n >= H.k.length) {
        H.k = grown(H.k, H.n);
        H.end = grown(H.end, H.n);
      }
      H.k[H.n] = k;
      H.end[H.n] = bestLexEnd;
      H.x[H.n++] = bestLex;
      lexNext = bestLexEnd;
    }
    if (bestAttr !== null) {
      if (H.na >= H.ak.length) {
        H.ak = grown(H.ak, H.na);
        H.aEnd = grown(H.aEnd, H.na);
      }
      H.ak[H.na] = k;
      H.aEnd[H.na] = bestAttrEnd;
      H.aa[H.na++] = bestAttr;
      attrNext = bestAttrEnd;
    }
  }
}

class Extraction {
  readonly out: ExtractedObservation[] = [];
  /** per sentence, the entities it is about (memo; undefined: not computed yet) */
  private readonly subjects: Array<number[] | undefined>;

  constructor(
    private readonly ents: CompiledEntities,
    private readonly attrs: CompiledAttributes,
    private readonly doc: Doc,
  ) {
    this.subjects = new Array(doc.ns);
  }

  /** Reads every sentence that does not end before `from` (the first mention of any entity: earlier ones cannot be about anyone). */
  run(from: number): void {
    for (let si = 0; si < this.doc.ns; si++) if (this.doc.se[si] > from) this.sentence(si);
  }

  /** Entities named in text[a, b), added to outE/outP (index of first occurrence) when new. */
  private scan(a: number, b: number, outE: number[], outP: number[]): void {
    if (b <= a) return;
    const text = this.doc.text;
    const first = this.ents.first;
    let left = this.ents.matcher.scan(a === 0 && b === text.length ? text : text.slice(a, b), first);
    for (let e = 0; left > 0 && e < first.length; e++) {
      const at = first[e];
      if (at === -1) continue;
      first[e] = -1;
      left--;
      const idx = outE.indexOf(e);
      if (idx === -1) {
        outE.push(e);
        outP.push(a + at);
      } else if (a + at < outP[idx]) outP[idx] = a + at;
    }
  }

  private sentence(si: number): void {
    const doc = this.doc;
    if (doc.sq[si] === 1) return;
    const t0 = doc.st0[si];
    const t1 = doc.st1[si];
    walk(doc, this.attrs.root, t0, t1);
    if (H.na === 0) return;
    const hn = H.n;
    const { k: hk, end: hEnd, x: hx } = H;
    let polar = false;
    for (let h = 0; h < hn && !polar; h++) {
      const x = hx[h];
      polar = x.kind === K_CUE || (x.kind === K_NEG && x.w !== 0) || x.kind === K_EXCEPT;
    }
    if (!polar) return;
    const tf = doc.tf;

    // -- clauses: cut points (token indices), soft ones (`, and`) kept when both sides say something
    const cuts: number[] = [];
    let soft: number[] | null = null;
    for (let h = 0; h < hn; h++) {
      const k = hk[h];
      const x = hx[h];
      if (x.kind === K_CONTRAST || x.kind === K_EXCEPT) {
        if (k === t0) {
          if (x.sub) {
            for (let q = hEnd[h]; q < t1; q++) {
              if (tf[q] & F_BRK) {
                cuts.push(q);
                break;
              }
            }
          }
        } else if (!x.afterComma || tf[k] & F_BRK) cuts.push(k);
      } else if (x.kind === K_JOIN && tf[k] & F_BRK && k > t0 && doc.tw[k] === 'and') (soft ??= []).push(k);
    }
    for (let k = t0 + 1; k < t1; k++) if (tf[k] & F_SEMI) cuts.push(k);
    if (soft !== null) {
      const hard = [...cuts, t1].sort((a, b) => a - b);
      for (const k of soft) {
        const before = Math.max(t0, ...hard.filter((c) => c <= k));
        const after = Math.min(...hard.filter((c) => c > k));
        if (says(before, k) && says(k, after)) cuts.push(k);
      }
    }
    cuts.sort((a, b) => a - b);

    const clauses: Clause[] = [];
    let k0 = t0;
    for (let q = 0; q <= cuts.length; q++) {
      const k1 = q < cuts.length ? cuts[q] : t1;
      if (k1 <= k0) continue;
      clauses.push({
        k0,
        k1,
        c0: k0 === t0 ? doc.ss[si] : doc.ts[k0],
        c1: k1 === t1 ? doc.se[si] : doc.ts[k1],
        except: false,
        ents: [],
        pos: [],
        cueK: [],
        cueEnd: [],
        cueV: [],
        net: 0,
      });
      k0 = k1;
    }
    for (let h = 0, c = 0; h < hn; h++) {
      while (hk[h] >= clauses[c].k1) c++;
      if (hx[h].kind === K_EXCEPT && hk[h] === clauses[c].k0) clauses[c].except = true;
    }

    // -- zones (conditions and comparison baselines, to the next comma) and segments
    const zone = doc.zone;
    const seg = doc.seg;
    zone.fill(0, t0, t1);
    for (let h = 0, c = 0; h < hn; h++) {
      const kind = hx[h].kind;
      while (hk[h] >= clauses[c].k1) c++;
      if (kind !== K_COND && kind !== K_BASELINE) continue;
      let q = hk[h];
      do zone[q] = kind === K_COND ? 1 : 2;
      while (++q < clauses[c].k1 && !(tf[q] & F_BRK));
    }
    for (let k = t0, s = 0, c = 0, h = 0; k < t1; k++) {
      if (k === clauses[c].k1) c++;
      while (h < hn && hk[h] < k) h++;
      if (k === clauses[c].k0 || tf[k] & F_BRK || (h < hn && hk[h] === k && hx[h].kind === K_JOIN)) s++;
      seg[k] = s;
    }

    // -- per clause: the entities it names (baselines excluded) and its cues
    let anyEntity = false;
    for (const cl of clauses) {
      let a = cl.c0;
      for (let k = cl.k0; k < cl.k1; k++) {
        if (zone[k] !== 2 || (k > cl.k0 && zone[k - 1] === 2)) continue;
        this.scan(a, doc.ts[k], cl.ents, cl.pos);
        let q = k;
        while (q < cl.k1 && zone[q] === 2) q++;
        a = q < cl.k1 ? doc.ts[q] : cl.c1;
      }
      this.scan(a, cl.c1, cl.ents, cl.pos);
      if (cl.ents.length) anyEntity = true;
      cuesOf(cl, doc);
    }

    // -- the entities each clause is about
    let carried: number[] = EMPTY;
    if (!anyEntity) {
      carried = this.carried(si, 0);
      this.subjects[si] = carried;
      if (carried.length === 0) return;
    } else {
      const all: number[] = [];
      for (const cl of clauses) for (const e of cl.ents) if (!all.includes(e)) all.push(e);
      this.subjects[si] = all;
    }

    // -- candidates, one per (entity, attribute)
    const cands: Candidate[] = [];
    for (let ci = 0; ci < clauses.length; ci++) {
      const cl = clauses[ci];
      let ents = cl.ents;
      let pos = cl.pos;
      if (!anyEntity) {
        ents = carried;
        pos = EMPTY;
      } else if (ents.length === 0) {
        let from = -1;
        for (let q = ci - 1; q >= 0 && from === -1; q--) if (clauses[q].ents.length) from = q;
        for (let q = ci + 1; q < clauses.length && from === -1; q++) if (clauses[q].ents.length) from = q;
        ents = clauses[from].ents;
        pos = clauses[from].pos;
      }
      for (let q = 0; q < H.na; q++) {
        const k = H.ak[q];
        if (k < cl.k0 || k >= cl.k1) continue;
        const v = valueFor(cl, ci, clauses, k, H.aEnd[q], seg);
        if (v === 0) continue;
        for (const a of H.aa[q]) {
          for (let i = 0; i < ents.length; i++) {
            const e = ents[i];
            let c = cands.find((x) => x.e === e && x.a === a);
            if (c === undefined) cands.push((c = { e, a, at: doc.ts[k], entAt: pos.length ? pos[i] : -1, pos: 0, neg: 0 }));
            if (v > 0) c.pos = Math.max(c.pos, v);
            else c.neg = Math.max(c.neg, -v);
          }
        }
      }
    }
    if (cands.length === 0) return;
    cands.sort((x, y) => x.at - y.at || x.entAt - y.entAt || x.e - y.e || x.a - y.a);
    let span: string | null = null;
    for (const c of cands) {
      const v = c.pos > 0 && c.neg > 0 ? c.pos - c.neg : c.pos > 0 ? c.pos : -c.neg;
      if (Math.abs(v) < 0.1 - 1e-9) continue; // praise and criticism cancel out
      const positive = v > 0;
      const m = Math.min(1, Math.max(0.1, Math.abs(v)));
      span ??= spanOf(doc.text, doc.ss[si], doc.se[si]);
      this.out.push({
        entity_id: this.ents.entities[c.e].id,
        attribute_id: this.attrs.attributes[c.a].id,
        positive,
        score: normalizeScore(positive, positive ? m : -m),
        text_span: span,
      });
    }
  }

  /** Entities a sentence naming none is about: the previous sentence's (pronoun) or the parent line's (list item). */
  private carried(si: number, depth: number): number[] {
    if (depth > 6) return EMPTY;
    const doc = this.doc;
    const t0 = doc.st0[si];
    const t1 = Math.min(doc.st1[si], t0 + 4);
    for (let k = t0; k < t1; k++) {
      if (doc.tw[k] === '' || !PRONOUNS.has(doc.tw[k])) continue;
      if (si === 0) return EMPTY;
      const prev = this.subjectsOf(si - 1, depth + 1);
      return prev.length === 1 ? prev : EMPTY;
    }
    const line = doc.sl[si];
    if (doc.lk[line] !== LINE_BULLET) return EMPTY;
    const parent = this.parentLine(line);
    if (parent === -1) return EMPTY;
    const found: number[] = [];
    for (let s = doc.ls0[parent]; s < doc.ls1[parent]; s++) for (const e of this.subjectsOf(s, depth + 1)) if (!found.includes(e)) found.push(e);
    return found.length === 1 ? found : EMPTY;
  }

  private subjectsOf(si: number, depth: number): number[] {
    const memo = this.subjects[si];
    if (memo !== undefined) return memo;
    const ents: number[] = [];
    this.scan(this.doc.ss[si], this.doc.se[si], ents, []);
    const found = ents.length ? ents : this.carried(si, depth + 1);
    this.subjects[si] = found;
    return found;
  }

  /** The line a list item belongs under, or -1. */
  private parentLine(line: number): number {
    const doc = this.doc;
    const indent = doc.li[line];
    for (let p = line - 1; p >= 0; p--) {
      if (doc.ls1[p] === doc.ls0[p]) continue; // blank
      if (doc.li[p] > indent) continue; // under an earlier sibling
      if (doc.li[p] === indent && doc.lk[p] === LINE_BULLET) continue; // a sibling
      if (doc.lk[p] === LINE_NONE && doc.lterm[p] === 1) return -1; // a paragraph sentence, not a heading
      return p;
    }
    return -1;
  }
}

/** True when tokens [from, to) hold an attribute term or a cue. */
function says(from: number, to: number): boolean {
  for (let q = 0; q < H.na; q++) if (H.ak[q] >= from && H.ak[q] < to) return true;
  for (let q = 0; q < H.n; q++) if (H.k[q] >= from && H.k[q] < to && (H.x[q].kind === K_CUE || H.x[q].kind === K_NEG)) return true;
  return false;
}

/** The clause's cues: negation, intensifiers and hedges applied; conditions and baselines left out. */
function cuesOf(cl: Clause, doc: Doc): void {
  const { k: hk, end: hEnd, x: hx } = H;
  const tf = doc.tf;
  const zone = doc.zone;
  let hedged = false;
  let negAt = -1;
  let negEnd = -1;
  let negW = 0;
  let intEnd = -1;
  let intW = 0;
  const crosses = (from: number, to: number): boolean => {
    for (let q = from; q <= to; q++) if (tf[q] & F_BRK) return true;
    return false;
  };
  const standalone = () => {
    if (negAt !== -1 && negW !== 0) {
      cl.cueK.push(negAt);
      cl.cueEnd.push(negEnd);
      cl.cueV.push(negW);
    }
    negAt = -1;
  };
  for (let h = 0; h < H.n; h++) {
    const k = hk[h];
    if (k < cl.k0 || k >= cl.k1 || zone[k] !== 0) continue;
    const x = hx[h];
    if (negAt !== -1 && (k - negEnd > 2 || crosses(negEnd, k))) standalone();
    switch (x.kind) {
      case K_HEDGE:
        hedged = true;
        break;
      case K_INT:
        intEnd = hEnd[h];
        intW = x.w;
        break;
      case K_NEG:
        standalone();
        negAt = k;
        negEnd = hEnd[h];
        negW = x.w;
        if (x.hedge) hedged = true;
        break;
      case K_CUE: {
        let m = Math.abs(x.w);
        let sign = x.w > 0 ? 1 : -1;
        if (intEnd !== -1 && k >= intEnd && k - intEnd <= 1 && !crosses(intEnd, k)) m = intW >= 1 ? 1 : Math.min(1, Math.max(m + 0.3, intW));
        if (negAt !== -1) {
          sign = -sign;
          m *= 0.7;
          negAt = -1;
        }
        cl.cueK.push(k);
        cl.cueEnd.push(hEnd[h]);
        cl.cueV.push(sign * m);
        break;
      }
    }
  }
  standalone();
  let net = 0;
  for (let q = 0; q < cl.cueV.length; q++) {
    if (hedged) cl.cueV[q] *= 0.5;
    net += cl.cueV[q];
  }
  cl.net = net;
}

/** The signed magnitude for the attribute term at tokens [k, end) of clause ci, or 0 for none. */
function valueFor(cl: Clause, ci: number, clauses: Clause[], k: number, end: number, seg: Int32Array): number {
  const n = cl.cueK.length;
  if (n === 0) {
    if (!cl.except) return 0;
    const main = ci > 0 ? clauses[ci - 1] : clauses[ci + 1];
    if (main === undefined || Math.abs(main.net) < 1e-9) return 0;
    return main.net > 0 ? -0.3 : 0.3;
  }
  const s = seg[k];
  let sameSeg = false;
  for (let q = 0; q < n && !sameSeg; q++) sameSeg = seg[cl.cueK[q]] === s || (cl.cueK[q] < end && cl.cueEnd[q] > k);
  let best = -1;
  let bestD = Infinity;
  for (let q = 0; q < n; q++) {
    const ck = cl.cueK[q];
    const ce = cl.cueEnd[q];
    const overlap = ck < end && ce > k;
    if (sameSeg && !overlap && seg[ck] !== s) continue;
    const d = overlap ? 0 : ce <= k ? k - ce : ck - end;
    if (d < bestD || (d === bestD && Math.abs(cl.cueV[q]) > Math.abs(cl.cueV[best]))) {
      best = q;
      bestD = d;
    }
  }
  return best === -1 ? 0 : cl.cueV[best];
}

const SPAN_MAX = 500;

function spanOf(text: string, start: number, end: number): string {
  let s = text.slice(start, end).trim();
  if (s.length > SPAN_MAX) {
    let cut = SPAN_MAX;
    const c = s.charCodeAt(cut - 1);
    if (c >= 0xd800 && c <= 0xdbff) cut--;
    s = s.slice(0, cut).trimEnd();
  }
  return s;
}

/** The attribute observations of one answer (see the module comment for the rules). */
export function extractObservations(entities: CompiledEntities, attributes: CompiledAttributes, text: string): ExtractedObservation[] {
  if (typeof text !== 'string' || text === '' || attributes.attributes.length === 0 || entities.entities.length === 0) return [];
  const t = entities.matcher.hasNonAsciiTerms && COMBINING.test(text) ? text.normalize('NFC') : text;
  // answers that name nobody end here: one scan of the whole text
  const first = entities.first;
  let left = entities.matcher.scan(t, first);
  if (left === 0) return [];
  let from = t.length;
  for (let e = 0; left > 0 && e < first.length; e++) {
    if (first[e] !== -1) {
      if (first[e] < from) from = first[e];
      first[e] = -1;
      left--;
    }
  }
  const doc = DOC;
  // nothing before the line of the first mention can be about an entity (no sentence, pronoun or list parent names one)
  doc.load(t, attributes.bloom, t.lastIndexOf('\n', from) + 1);
  try {
    if (t.includes('?')) doc.blankQuotedQuestions();
    const masks = attributes.masksFor(entities);
    if (masks.length) doc.maskNames(masks);
    const x = new Extraction(entities, attributes, doc);
    x.run(from);
    return x.out;
  } finally {
    doc.text = '';
  }
}
