/**
 * A website's attributes compiled once per catalogue version: each attribute's terms (its name, the meaningful words of
 * its name and description, inflected, and the built-in synonym groups they trigger) inserted with the lexicon into
 * one trie of words, and the bloom filter of the trie's words. Immutable after construction, except the memo of the
 * entity-name masks per compiled entities (a WeakMap that fills once per entities and then is only read).
 */
import type { CompiledEntities } from '../answer';
import {
  ALL_GROUP_TERMS,
  BLOOM_SIZE,
  GROUP_TERMS,
  inflections,
  LEXICON,
  type Mask,
  type Node,
  nodeFor,
  PRONOUNS,
  STOPWORDS,
  wordHash,
  wordsOf,
} from './lexicon';

export interface AttributeInput {
  id: string;
  name: string;
  description?: string | null;
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
