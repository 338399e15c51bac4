/** Attribute observations of one answer: what it says about each entity for each watched attribute, pure and deterministic (rules: docs/analysis.md#attribute-observations) */
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
