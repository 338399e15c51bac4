/**
 * Whole-word term matching over answer text, all entities' terms in one pass: the longest match wins
 * at a position and the next match starts after it (leftmost-longest, non-overlapping, like a regex
 * alternation sorted longest first). It runs for every recorded answer and again over a website's
 * whole history when its catalogue changes, so it avoids touching every character: a Wu-Manber scan
 * (a shift table over 2-character blocks of the terms' first `window` characters) skips ahead up to
 * window - 1 characters at a time, a bitmap of the terms' first two characters discards most
 * remaining candidates, and a trie of the folded terms checks each survivor and its boundaries.
 * No regex per entity: a `\p{…}` regex costs milliseconds to compile, and visits every character.
 *
 * Comparison is per UTF-16 code unit after folding, so indices always point into the text as given:
 * - case: each code unit lower-cased on its own (so `İ` folds to `i`, final `ς` to `σ`);
 * - every Unicode space (tab, newline, no-break space, …) folds to one space, and a space in a term
 *   matches any run of them in the text (`Ben  &\nJerry's` matches `Ben & Jerry's`);
 * - typographic apostrophes (’ ‘ ʼ ＇) fold to `'`, non-breaking hyphens (‐ ‑) to `-`.
 *
 * Word characters are letters, marks, numbers and connector punctuation (`\p{L}\p{M}\p{N}\p{Pc}`).
 * "Whole word": a term edge that is a word character must not touch a word character in the text
 * (`Acme` never matches `Acmeville` or `pacme`; `Acme's`, `Acme-powered`, `**Acme**` match). An edge
 * that is punctuation has no requirement (`C++`, `@acme`). Scripts written without spaces between
 * words (Han, Kana, Hangul with its attached particles, Thai, Lao, Khmer, Myanmar, Tibetan) relax
 * the requirement when either side is such a character: `我用Acme产品` mentions Acme, `腾讯的` mentions 腾讯.
 *
 * Domain terms (`acme.com`) are stricter where hostnames differ from words: the character before
 * may be `.` (a subdomain, `blog.acme.com`), `/`, `@` or anything but a word character or `-`; the
 * character after may not be a word character, `-`, or a `.` followed by a word character
 * (`acme.com.evil.net` and `acme.community` are not `acme.com`; `see acme.com.` is).
 */

/** `name`: an entity's name or identifier; `domain`: the domain of its URL. */
export type TermKind = 'name' | 'domain';

const SPACE = 0x20;
const SHIFT_SIZE = 4096;
const SHIFT_MASK = SHIFT_SIZE - 1;
const blockHash = (a: number, b: number): number => (a * 67 + b) & SHIFT_MASK;
const NOT_WORD = 0;
const WORD = 1;
/** A word character of a script written without spaces between words: boundaries are relaxed. */
const NOSPACE = 2;

// ---- per code unit tables, filled lazily (0 = not computed yet for FOLD, 255 for CLS) ----

const FOLD = new Uint16Array(0x10000);
const CLS = new Uint8Array(0x10000).fill(255);
const ASTRAL_CLS = new Map<number, number>();

const WORD_RE = /^[\p{L}\p{M}\p{N}\p{Pc}]$/u;
const NOSPACE_RE = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Hangul}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}\p{sc=Tibetan}]$/u;
/** What JavaScript's `\s` matches: WhiteSpace and LineTerminator code points. */
const SPACES = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028,
  0x2029, 0x202f, 0x205f, 0x3000, 0xfeff,
]);
const APOSTROPHES = new Set([0x2019, 0x2018, 0x02bc, 0xff07]);
const HYPHENS = new Set([0x2010, 0x2011]);

function computeFold(c: number): number {
  if (c >= 0xd800 && c <= 0xdfff) return c;
  if (SPACES.has(c)) return SPACE;
  const s = String.fromCharCode(c);
  if (APOSTROPHES.has(c)) return 0x27;
  if (HYPHENS.has(c)) return 0x2d;
  if (c === 0x3c2) return 0x3c3; // final sigma: the text's per-unit lower-casing cannot tell it apart
  return s.toLowerCase().charCodeAt(0); // `İ` lower-cases to `i̇`: its first unit keeps indices aligned
}

function computeClass(cp: number): number {
  const s = String.fromCodePoint(cp);
  if (!WORD_RE.test(s)) return NOT_WORD;
  return NOSPACE_RE.test(s) ? NOSPACE : WORD;
}

for (let c = 0; c < 0x250; c++) {
  FOLD[c] = computeFold(c);
  CLS[c] = computeClass(c);
}

/** The folded code unit (see the module comment). */
export function fold(c: number): number {
  const f = FOLD[c];
  if (f !== 0 || c === 0) return f;
  return (FOLD[c] = computeFold(c));
}

function classOfUnit(c: number): number {
  const k = CLS[c];
  if (k !== 255) return k;
  return (CLS[c] = computeClass(c));
}

function classOfCodePoint(cp: number): number {
  if (cp < 0x10000) return classOfUnit(cp);
  let k = ASTRAL_CLS.get(cp);
  if (k === undefined) ASTRAL_CLS.set(cp, (k = computeClass(cp)));
  return k;
}

/** Word class of the character that holds the code unit at i (a surrogate pair counts as one character). */
function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) return c < 0x250 ? CLS[c] : classOfUnit(c);
  const cp = c <= 0xdbff ? text.codePointAt(i)! : i > 0 ? text.codePointAt(i - 1)! : c;
  return cp >= 0x10000 ? classOfCodePoint(cp) : NOT_WORD; // a lone surrogate is not a word character
}

// ---- terms ----

/** A term folded for the trie: Unicode NFC, spaces collapsed and trimmed, per-unit fold. Empty when unusable. */
export function foldTerm(term: string): string {
  if (typeof term !== 'string') return '';
  const s = term.normalize('NFC');
  let out = '';
  let pendingSpace = false;
  let hasWord = false;
  for (let i = 0; i < s.length; i++) {
    const f = fold(s.charCodeAt(i));
    if (f === SPACE) {
      pendingSpace = out !== '';
      continue;
    }
    if (pendingSpace) out += ' ';
    pendingSpace = false;
    out += String.fromCharCode(f);
    if (!hasWord && classAt(s, i) !== NOT_WORD) hasWord = true;
  }
  return hasWord ? out : ''; // a term of punctuation alone ("&", "-") would match everywhere
}

interface TrieNode {
  /** the first child's folded code unit (-1: none) and node: most nodes of a term trie have one child */
  c: number;
  child: TrieNode | null;
  /** the other children, by folded code unit */
  more: Map<number, TrieNode> | null;
  /** word class of the last character of the terms ending here */
  lastCls: number;
  /** entity indices whose name or identifier ends here, or null */
  names: number[] | null;
  /** entity indices whose domain ends here, or null */
  domains: number[] | null;
}

interface RootEntry {
  node: TrieNode;
  /** word class of the first character of every term under this entry */
  firstCls: number;
}

const newNode = (lastCls: number): TrieNode => ({ c: -1, child: null, more: null, lastCls, names: null, domains: null });

function childOf(node: TrieNode, f: number): TrieNode | null {
  if (node.c === f) return node.child;
  return node.more === null ? null : (node.more.get(f) ?? null);
}

function addChild(node: TrieNode, f: number, child: TrieNode): void {
  if (node.c === -1) {
    node.c = f;
    node.child = child;
  } else (node.more ??= new Map()).set(f, child);
}

/**
 * The compiled terms of one catalogue version. `scan` reports, for each entity, the index of its
 * first match; every entity whose term matched at a position counts (two entities sharing a term
 * both count, at the same index).
 */
export class TermMatcher {
  private readonly rootAscii: Array<RootEntry | undefined> = Array.from({ length: 128 }, () => undefined);
  private readonly rootOther = new Map<number, RootEntry>();
  private readonly entityCount: number;
  /** entities newly found by the last walk */
  private added = 0;
  /** length of the shortest term prefix before a space: the scan window (0 when there are no terms) */
  private readonly window: number;
  /** 1 or 2: folded characters hashed per lookup of the shift table */
  private readonly block: number;
  /** how far the window may move when its last block hashes here (Wu-Manber) */
  private readonly shift = new Uint8Array(SHIFT_SIZE);
  /** 1 where some term's first two characters hash: a cheap test before the trie walk (window ≥ 2) */
  private readonly prefix = new Uint8Array(SHIFT_SIZE);
  /** true when some term holds a character outside ASCII: decomposed text is then composed first */
  readonly hasNonAsciiTerms: boolean;

  constructor(entityCount: number, terms: ReadonlyArray<{ entity: number; term: string; kind: TermKind }>) {
    this.entityCount = entityCount;
    let nonAscii = false;
    const folded: string[] = [];
    for (const t of terms) {
      const f = foldTerm(t.term);
      if (f === '') continue;
      if (!nonAscii && /[^\x00-\x7f]/.test(f)) nonAscii = true;
      this.add(f, t.entity, t.kind);
      folded.push(f);
    }
    this.hasNonAsciiTerms = nonAscii;
    // A space in a term matches a run of spaces, so only the part before the first space has a fixed length.
    const window = folded.length === 0 ? 0 : Math.min(255, ...folded.map((f) => (f.indexOf(' ') === -1 ? f.length : f.indexOf(' '))));
    this.window = window;
    this.block = window >= 2 ? 2 : 1;
    this.shift.fill(Math.max(1, window - this.block + 1));
    // The scan hashes ASCII code units as they are (no fold in the hot loop), so each ASCII letter of a
    // prefix goes in under both cases; other characters are folded by the scan and go in folded.
    const keys = (f: number): number[] => (f >= 0x61 && f <= 0x7a ? [f, f - 0x20] : [f]);
    for (const f of folded) {
      for (let q = this.block - 1; q < window; q++) {
        const d = window - 1 - q;
        for (const b of keys(f.charCodeAt(q))) {
          if (this.block === 1) this.shift[b & SHIFT_MASK] = Math.min(this.shift[b & SHIFT_MASK], d);
          else for (const a of keys(f.charCodeAt(q - 1))) this.shift[blockHash(a, b)] = Math.min(this.shift[blockHash(a, b)], d);
        }
      }
      if (this.block === 2) for (const a of keys(f.charCodeAt(0))) for (const b of keys(f.charCodeAt(1))) this.prefix[blockHash(a, b)] = 1;
    }
  }

  private add(folded: string, entity: number, kind: TermKind): void {
    const f0 = folded.charCodeAt(0);
    let entry = f0 < 128 ? this.rootAscii[f0] : this.rootOther.get(f0);
    const cls0 = classAt(folded, 0);
    if (!entry) {
      entry = { node: newNode(cls0), firstCls: cls0 };
      if (f0 < 128) this.rootAscii[f0] = entry;
      else this.rootOther.set(f0, entry);
    }
    let node = entry.node;
    for (let i = 1; i < folded.length; i++) {
      const f = folded.charCodeAt(i);
      let child = childOf(node, f);
      if (child === null) addChild(node, f, (child = newNode(classAt(folded, i))));
      node = child;
    }
    if (kind === 'domain') {
      if (!node.domains) node.domains = [];
      if (!node.domains.includes(entity)) node.domains.push(entity);
    } else {
      if (!node.names) node.names = [];
      if (!node.names.includes(entity)) node.names.push(entity);
    }
  }

  /**
   * Scans text; sets first[e] to the index of entity e's first match (first must hold -1 for every
   * entity on entry) and returns how many entities matched.
   */
  scan(text: string, first: Int32Array): number {
    if (first.length < this.entityCount) throw new Error('scan: first is shorter than the entity count');
    const m = this.window;
    if (m === 0) return 0;
    const n = text.length;
    const shift = this.shift;
    const two = this.block === 2;
    let found = 0;
    // Wu-Manber: look at the last block of a window of m characters; a non-zero shift proves that no
    // term starts in the positions skipped; at shift 0 the trie walk checks the window's start.
    let j = m - 1;
    while (j < n) {
      let c = text.charCodeAt(j);
      if (c >= 0x80) c = fold(c);
      let h: number;
      if (two) {
        let p = text.charCodeAt(j - 1);
        if (p >= 0x80) p = fold(p);
        h = blockHash(p, c);
      } else h = c & SHIFT_MASK;
      const s = shift[h];
      if (s !== 0) {
        j += s;
        continue;
      }
      const i = j - m + 1;
      const c0 = text.charCodeAt(i);
      if (two) {
        let c1 = text.charCodeAt(i + 1);
        if (c1 >= 0x80) c1 = fold(c1);
        if (this.prefix[blockHash(c0 >= 0x80 ? fold(c0) : c0, c1)] === 0) {
          j++;
          continue;
        }
      }
      const f0 = c0 < 0x250 ? FOLD[c0] : fold(c0);
      const entry = f0 < 128 ? this.rootAscii[f0] : this.rootOther.get(f0);
      if (entry !== undefined) {
        const end = this.walk(text, i, entry, first);
        if (end >= 0) {
          found += this.added;
          j = end + m - 1; // non-overlapping: the next term may start right after this one
          continue;
        }
      }
      j++;
    }
    return found;
  }

  /**
   * The longest term starting at i that satisfies its boundaries: marks its entities (their count
   * in this.added) and returns the index after it, or -1 when no term matches there.
   */
  private walk(text: string, i: number, entry: RootEntry, first: Int32Array): number {
    const n = text.length;
    const firstCls = entry.firstCls;
    const prevCls = i === 0 ? NOT_WORD : classAt(text, i - 1);
    const leftName = firstCls === NOT_WORD || prevCls !== WORD || firstCls === NOSPACE;
    const leftDomain = i === 0 || (prevCls !== WORD && text.charCodeAt(i - 1) !== 0x2d);
    if (!leftName && !leftDomain) return -1; // inside a word: most candidate windows end here
    let node = entry.node;
    let j = i + 1;
    let best: TrieNode | null = null;
    let bestEnd = -1;
    let bestNames = false;
    let bestDomains = false;
    for (;;) {
      if (node.names !== null || node.domains !== null) {
        const nameOk = node.names !== null && leftName && rightNameOk(text, j, node.lastCls);
        const domainOk = node.domains !== null && leftDomain && rightDomainOk(text, j);
        if (nameOk || domainOk) {
          best = node;
          bestEnd = j;
          bestNames = nameOk;
          bestDomains = domainOk;
        }
      }
      if (j >= n) break;
      const c = text.charCodeAt(j);
      const f = c < 0x250 ? FOLD[c] : fold(c);
      const child = node.c === f ? node.child : node.more === null ? null : (node.more.get(f) ?? null);
      if (child === null) break;
      j++;
      if (f === SPACE) while (j < n && fold(text.charCodeAt(j)) === SPACE) j++;
      node = child;
    }
    if (best === null) return -1;
    let added = 0;
    if (bestNames) for (const e of best.names!) if (first[e] === -1) (first[e] = i), added++;
    if (bestDomains) for (const e of best.domains!) if (first[e] === -1) (first[e] = i), added++;
    this.added = added;
    return bestEnd;
  }
}

function rightNameOk(text: string, j: number, lastCls: number): boolean {
  if (lastCls === NOT_WORD || j >= text.length) return true;
  const next = classAt(text, j);
  return next !== WORD || lastCls === NOSPACE;
}

function rightDomainOk(text: string, j: number): boolean {
  if (j >= text.length) return true;
  const c = text.charCodeAt(j);
  if (c === 0x2d) return false;
  if (c === 0x2e) return j + 1 >= text.length || classAt(text, j + 1) !== WORD;
  return classAt(text, j) !== WORD;
}
