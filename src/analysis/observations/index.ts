/**
 * Attribute observations of one answer: what the answer says about one entity (the brand or a
 * competitor) for one attribute (a trait the website watches: "Price", "Support", …), praising
 * (positive) or criticizing, and how strongly. Pure and deterministic: the worker calls it for every
 * answer, with the entities (../answer, compileEntities) and the attributes (compileAttributes)
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
 * - Entities: those a clause names, found by the entity matcher (../matcher; names, identifiers and
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
 *   ../answer). Output in text order: by sentence, then attribute term, then entity position.
 * - Words of an entity's name or domain that are lexicon or attribute words ("Best Buy",
 *   "Support.com") are not read as cues or terms. Identifiers are not masked that way.
 *
 * The module is split in four: ./lexicon (the words and their kinds), ./attributes (a website's attributes compiled
 * with the lexicon into one trie), ./segmentation (tokens, sentences, lines) and ./rules (clauses, cues, subjects,
 * observations). No state is shared between calls: each call takes a workspace (a Doc and its Hits scratch) from a
 * pool and gives it back, so a call made while another is under way (re-entrancy) gets its own. The compiled
 * entities' `first` array (../answer) is scratch of the entity matcher, written and reset within each scan.
 */
import type { CompiledEntities } from '../answer';
import type { CompiledAttributes } from './attributes';
import { type ExtractedObservation, Extraction, Hits } from './rules';
import { Doc } from './segmentation';

export { type AttributeInput, type CompiledAttribute, CompiledAttributes, compileAttributes } from './attributes';
export { type ExtractedObservation, isValidScore, normalizeScore } from './rules';

const COMBINING = /[\u0300-\u036f]/;

/** The scratch of one extraction: its buffers grow to the longest text seen and are reused by the next call. */
interface Workspace {
  doc: Doc;
  hits: Hits;
}

/** Workspaces not in use: a call pops one (or makes one) and pushes it back when done. */
const idle: Workspace[] = [];

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
  const ws = idle.pop() ?? { doc: new Doc(), hits: new Hits() };
  const doc = ws.doc;
  try {
    // nothing before the line of the first mention can be about an entity (no sentence, pronoun or list parent names one)
    doc.load(t, attributes.bloom, t.lastIndexOf('\n', from) + 1);
    if (t.includes('?')) doc.blankQuotedQuestions();
    const masks = attributes.masksFor(entities);
    if (masks.length) doc.maskNames(masks);
    const x = new Extraction(entities, attributes, doc, ws.hits);
    x.run(from);
    return x.out;
  } finally {
    doc.text = '';
    idle.push(ws);
  }
}
