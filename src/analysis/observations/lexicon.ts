/**
 * The words the rules read (./rules): the lexicon of praise and criticism cues, negators, intensifiers, hedges,
 * contrast, exception, comparison-baseline, condition and join markers, each phrase with its kind and strength; the
 * built-in attribute synonym groups and the words that carry no trait; and the trie and the hash both the compiled
 * attributes (./attributes) and the tokenizer (./segmentation) use to find them. Everything here is built once when the
 * module loads and never changes after.
 */
import { fold } from '../matcher';

export const K_CUE = 1;
export const K_NEG = 2;
export const K_INT = 3;
export const K_HEDGE = 4;
export const K_CONTRAST = 5;
export const K_EXCEPT = 6;
export const K_BASELINE = 7;
export const K_COND = 8;
export const K_JOIN = 9;
export const K_NOOP = 10;

export interface Lex {
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
const STANDALONE_NEGATORS: Record<string, number> = {
  without: -0.6,
  lacks: -0.6,
  lack: -0.6,
  'lack of': -0.6,
  lacking: -0.6,
  missing: -0.6,
  no: -0.5,
};
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
  ['but', false, false],
  ['however', false, false],
  ['nevertheless', false, false],
  ['nonetheless', false, false],
  ['on the other hand', false, false],
  ['that said', false, false],
  ['then again', false, false],
  ['on the downside', false, false],
  ['on the flip side', false, false],
  ['yet', false, true],
  ['though', true, false],
  ['although', true, false],
  ['even though', true, false],
  ['even if', true, false],
  ['whereas', true, true],
  ['while', true, true],
];
const EXCEPTS = 'except|except for|apart from|aside from|other than|despite|in spite of';
const BASELINES =
  'than|compared with|compared to|in comparison to|in comparison with|unlike|versus|vs|relative to|as opposed to|rather than|' +
  'in contrast to|alternative to|alternatives to';
const CONDITIONS = 'if|when|whenever|in case|as long as|provided|assuming';
const JOINS = 'and|with|plus|as well as|along with';
const NOOPS = 'not only|not just|no matter|not to mention|no wonder|pros and cons|best practices|best practice|as well|on top of|but also|at least';

export const PRONOUNS: ReadonlySet<string> = new Set(['it', 'its', "it's", 'they', 'their', "they're", 'theirs', 'them']);

// ---- attribute synonyms ----

/** Built-in synonym groups: an attribute whose name (or, failing that, description) holds one of a group's terms gets the whole group. */
export const GROUPS: readonly string[] = [
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
export const STOPWORDS: ReadonlySet<string> = new Set(
  (
    "a|an|the|and|or|of|to|for|in|on|at|by|with|from|as|is|are|was|were|be|been|being|it|its|it's|this|that|these|those|how|what|which|" +
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

export interface Node {
  lex: Lex | null;
  /** indices of the attributes a term ending here belongs to */
  attrs: number[] | null;
  next: Map<string, Node> | null;
}

export const newNode = (): Node => ({ lex: null, attrs: null, next: null });

/** The words of an entity name or domain to blank in texts, and the index of its first trie word. */
export interface Mask {
  words: string[];
  anchor: number;
}

export function nodeFor(root: Map<string, Node>, words: readonly string[]): Node {
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
export function wordsOf(s: string): string[] {
  return (
    s
      .toLowerCase()
      .replace(/[\u2019\u2018]/g, "'")
      .match(WORDS_RE) ?? []
  );
}

const lexicon = new Map<string, Lex>();
{
  const put = (phrases: string, entry: Lex) => {
    for (const p of phrases.split('|')) lexicon.set(wordsOf(p).join(' '), entry);
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

/** Every lexicon phrase (its words joined by one space) and its entry. */
export const LEXICON: ReadonlyMap<string, Lex> = lexicon;

export const GROUP_TERMS: ReadonlyArray<readonly string[]> = GROUPS.map((g) => g.split('|').map((t) => wordsOf(t).join(' ')));
export const ALL_GROUP_TERMS: ReadonlySet<string> = new Set(GROUP_TERMS.flat());

/** Singular and plural forms of the last word of a term. */
export function inflections(term: string): string[] {
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

// ---- hashing (the bloom filter of trie words) ----

export const BLOOM_SIZE = 1 << 16;
const BLOOM_MASK = BLOOM_SIZE - 1;
export const FNV_BASIS = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;
export const bloomIndex = (h: number): number => (h ^ (h >>> 16)) & BLOOM_MASK;

/** The bloom slot of a lower-cased word, hashed as the tokenizer hashes it (ASCII as is, other code units folded). */
export function wordHash(w: string): number {
  let h = FNV_BASIS;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    h = Math.imul(h ^ (c < 0x80 ? c : fold(c)), FNV_PRIME);
  }
  return bloomIndex(h);
}
