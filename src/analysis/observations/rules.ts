/**
 * The rules (see ../observations.ts for them in prose): per sentence, the lexicon and attribute hits (walk), the
 * clauses and their cut points, the zones (conditions, comparison baselines) and segments, the cues of each clause
 * with negation, intensifiers and hedges applied, the entities each clause is about (named, else carried from a
 * neighbouring clause, the previous sentence or the parent list line), and one observation per (entity, attribute,
 * sentence). An Extraction reads one Doc with one Hits scratch; both belong to the call that made it.
 */
import type { CompiledEntities } from '../answer';
import type { CompiledAttributes } from './attributes';
import { K_BASELINE, K_COND, K_CONTRAST, K_CUE, K_EXCEPT, K_HEDGE, K_INT, K_JOIN, K_NEG, type Lex, type Node, PRONOUNS } from './lexicon';
import { type Doc, F_BRK, F_SEMI, grown, LINE_BULLET, LINE_NONE } from './segmentation';
import { cutText } from '../../domain/text';

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

// ---- extraction ----

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

/** Terms of one kind found in the sentence being read, in token order: `n` of them, each a first token, token end and what it is. */
class Found<T> {
  n = 0;
  k: Int32Array;
  end: Int32Array;
  x: T[] = [];
  constructor(size: number) {
    this.k = new Int32Array(size);
    this.end = new Int32Array(size);
  }

  add(k: number, end: number, x: T): void {
    if (this.n >= this.k.length) {
      this.k = grown(this.k, this.n);
      this.end = grown(this.end, this.n);
    }
    this.k[this.n] = k;
    this.end[this.n] = end;
    this.x[this.n++] = x;
  }
}

/** Hits of the sentence being read: scratch of one extraction, refilled by walk() for every sentence. */
export class Hits {
  /** lexicon hits: the entry */
  readonly lex = new Found<Lex>(128);
  /** attribute hits: the attribute indices */
  readonly attrs = new Found<number[]>(64);
}

/** Finds lexicon and attribute terms in tokens [t0, t1) (longest match, each kind on its own). */
export function walk(H: Hits, doc: Doc, root: Map<string, Node>, t0: number, t1: number): void {
  const { tw, tf } = doc;
  H.lex.n = H.attrs.n = 0;
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
      H.lex.add(k, bestLexEnd, bestLex);
      lexNext = bestLexEnd;
    }
    if (bestAttr !== null) {
      H.attrs.add(k, bestAttrEnd, bestAttr);
      attrNext = bestAttrEnd;
    }
  }
}

export class Extraction {
  readonly out: ExtractedObservation[] = [];
  /** per sentence, the entities it is about (memo; undefined: not computed yet) */
  private readonly subjects: Array<number[] | undefined>;

  constructor(
    private readonly ents: CompiledEntities,
    private readonly attrs: CompiledAttributes,
    private readonly doc: Doc,
    private readonly H: Hits,
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
    const H = this.H;
    walk(H, doc, this.attrs.root, t0, t1);
    if (H.attrs.n === 0) return;
    const { n: hn, k: hk, end: hEnd, x: hx } = H.lex;
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
        if (says(H, before, k) && says(H, k, after)) cuts.push(k);
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
      cuesOf(H, cl, doc);
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
      const attrs = H.attrs;
      for (let q = 0; q < attrs.n; q++) {
        const k = attrs.k[q];
        if (k < cl.k0 || k >= cl.k1) continue;
        const v = valueFor(cl, ci, clauses, k, attrs.end[q], seg);
        if (v === 0) continue;
        for (const a of attrs.x[q]) {
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
function says(H: Hits, from: number, to: number): boolean {
  const { attrs, lex } = H;
  for (let q = 0; q < attrs.n; q++) if (attrs.k[q] >= from && attrs.k[q] < to) return true;
  for (let q = 0; q < lex.n; q++) if (lex.k[q] >= from && lex.k[q] < to && (lex.x[q].kind === K_CUE || lex.x[q].kind === K_NEG)) return true;
  return false;
}

/** The clause's cues: negation, intensifiers and hedges applied; conditions and baselines left out. */
function cuesOf(H: Hits, cl: Clause, doc: Doc): void {
  const { n: hn, k: hk, end: hEnd, x: hx } = H.lex;
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
  for (let h = 0; h < hn; h++) {
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
  if (s.length > SPAN_MAX) s = cutText(s, SPAN_MAX).trimEnd();
  return s;
}
