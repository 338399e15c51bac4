/**
 * Segmentation: one text cut into tokens (words, with the punctuation before each as flags), sentences (at . ! ?
 * followed by a space or the end, at line breaks; abbreviations and initials end none) and lines (indent and list
 * marker: bullet, number, heading). Also blanks the words of quoted questions and of entity names that hold lexicon
 * words. Each Doc is scratch space for one extraction at a time (its buffers grow and are reused); extractObservations
 * takes one from a pool, so no two calls share one.
 */
import { fold } from '../matcher';
import { bloomIndex, FNV_BASIS, FNV_PRIME, type Mask } from './lexicon';

/** token flag: punctuation that separates segments before it (, : ; ( ) [ ] | — – and a spaced hyphen) */
export const F_BRK = 1;
/** token flag: a semicolon before it (a clause boundary) */
export const F_SEMI = 2;

export const LINE_NONE = 0;
export const LINE_BULLET = 1;
export const LINE_NUMBER = 2;
export const LINE_HEADING = 3;

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
  return (
    c === 32 || c === 10 || c === 9 || c === 13 || c === 11 || c === 12 || c === 0xa0 || (c >= 0x2000 && c <= 0x200a) || c === 0x202f || c === 0x3000
  );
}

/** Characters that may follow a sentence's final . ! ? (closing quotes, brackets, markdown emphasis). */
function isCloser(c: number): boolean {
  return c === 34 || c === 39 || c === 41 || c === 93 || c === 42 || c === 95 || c === 96 || c === 0x201d || c === 0x2019 || c === 0xbb;
}

const ABBREVIATIONS = new Set(['inc', 'ltd', 'co', 'corp', 'vs', 'approx', 'dr', 'mr', 'mrs', 'ms', 'st', 'jr', 'sr', 'no', 'nr', 'fig', 'cf']);

export function grown<T extends Int32Array | Uint8Array>(a: T, n: number): T {
  if (n < a.length) return a;
  const b = new (a.constructor as { new (n: number): T })(Math.max(n + 1, a.length * 2));
  b.set(a);
  return b;
}

/** One text cut into tokens (words), sentences and lines; its buffers are allocated once and reused by the next text loaded. */
export class Doc {
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
    return this.tw[k] !== ''
      ? this.tw[k]
      : this.text
          .slice(this.ts[k], this.te[k])
          .toLowerCase()
          .replace(/\u2019/g, "'");
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
