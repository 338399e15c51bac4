import type { Aggregate } from '../handle';
import { type EventData, type EventsOf, exhaustive, knowledgeEvents } from '../../src/domain/events';
import { typesOf } from '../../src/domain/event-lists';

/**
 * A website's knowledge base, folded from its stream `knowledge-<website_id>`: pillars (names unique
 * case-insensitively) and brand facts with their provenance, review status and lineage. Every rule two requests can
 * race for (get-or-create of a pillar by name, a text change of a fact, a same-response text collision, duplicates
 * found by research, deletes) is decided on this state with the stream's expected revision.
 */
export const knowledgeStream = (websiteId: string) => `knowledge-${websiteId}`;

export const KNOWLEDGE_EVENT_TYPES = typesOf(knowledgeEvents);
export type KnowledgeEvent = EventsOf<typeof KNOWLEDGE_EVENT_TYPES>;

export type PillarStatus = EventData<'PillarUpdated'>['status'] & string;
export type Confidence = EventData<'FactRecorded'>['confidence'];
export type ReviewStatus = EventData<'FactRecorded'>['review_status'];
export type SourceType = EventData<'FactRecorded'>['source_type'];

/** A recorded fact's own fields, as the decider's state and the read model both keep them (absent source: null). */
export const recordedFact = (d: EventData<'FactRecorded'>) => ({
  id: d.fact_id,
  pillar_id: d.pillar_id,
  text: d.text,
  source_url: d.source_url ?? null,
  source_quote: d.source_quote ?? null,
  confidence: d.confidence,
  review_status: d.review_status,
  source_type: d.source_type,
  response_id: d.response_id,
  duplicate_of: d.duplicate_of,
  replaces: d.replaces,
});

export interface PillarState {
  id: string;
  name: string;
  description: string;
  status: PillarStatus;
  /** the research jobs that reported back (a redelivered report is not applied twice) */
  researched_by: readonly string[];
}

export interface FactState {
  id: string;
  pillar_id: string | null;
  /** null once erased (or when read back after erasure) */
  text: string | null;
  source_url: string | null;
  source_quote: string | null;
  confidence: Confidence;
  review_status: ReviewStatus;
  source_type: SourceType;
  response_id: string | null;
  duplicate_of: string | null;
  /** the archived fact whose text this one replaced */
  replaces: string | null;
  archived: boolean;
}

export interface KnowledgeState {
  pillars: Map<string, PillarState>;
  /** lower-cased name -> pillar id */
  names: Map<string, string>;
  facts: Map<string, FactState>;
  /** normalized text -> ids of the live (not archived) facts with that text, oldest first */
  texts: Map<string, string[]>;
  /** facts deleted for good: never recorded again (their subject is erased) */
  erased: Set<string>;
}

/** What counts as the same fact text: Unicode-normalized, case, inner spacing and trailing punctuation ignored. */
export const normalizeFactText = (t: string) =>
  t
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s.!?;:,]+$/, '');

export const KNOWLEDGE_MESSAGES = {
  pillarNotFound: 'Pillar not found',
  pillarNameTaken: 'Pillar name already exists',
  factNotFound: 'Fact not found',
  capturedFromResponse: 'Facts captured from AI responses cannot have their text changed',
  duplicate: 'Hidden duplicate facts cannot have their text changed',
  rejected: 'Rejected facts cannot have their text changed',
  duplicateReview: 'Hidden duplicate facts cannot be reviewed',
  collision: 'Another fact captured from the same response already has this text',
};

export const emptyKnowledge = (): KnowledgeState => ({
  pillars: new Map(),
  names: new Map(),
  facts: new Map(),
  texts: new Map(),
  erased: new Set(),
});

const own = (s: KnowledgeState): KnowledgeState => ({
  pillars: new Map(s.pillars),
  names: new Map(s.names),
  facts: new Map(s.facts),
  texts: new Map(s.texts),
  erased: new Set(s.erased),
});

function unindex(s: KnowledgeState, f: FactState): void {
  if (f.text === null) return;
  const key = normalizeFactText(f.text);
  const ids = s.texts.get(key)?.filter((id) => id !== f.id);
  if (ids?.length) s.texts.set(key, ids);
  else s.texts.delete(key);
}

function index(s: KnowledgeState, f: FactState): void {
  if (f.text === null || f.archived) return;
  const key = normalizeFactText(f.text);
  s.texts.set(key, [...(s.texts.get(key) ?? []), f.id]);
}

/** Folds one event into a state the caller owns (changed in place; entries are replaced, never changed). */
function apply(s: KnowledgeState, e: KnowledgeEvent): KnowledgeState {
  switch (e.type) {
    case 'PillarCreated': {
      const d = e.data;
      s.pillars.set(d.pillar_id, { id: d.pillar_id, name: d.name, description: d.description, status: 'researching', researched_by: [] });
      s.names.set(d.name.toLowerCase(), d.pillar_id);
      break;
    }
    case 'PillarUpdated': {
      const d = e.data;
      const p = s.pillars.get(d.pillar_id);
      if (!p) break;
      if (d.name !== undefined) {
        if (s.names.get(p.name.toLowerCase()) === p.id) s.names.delete(p.name.toLowerCase());
        s.names.set(d.name.toLowerCase(), p.id);
      }
      s.pillars.set(p.id, { ...p, name: d.name ?? p.name, description: d.description ?? p.description, status: d.status ?? p.status });
      break;
    }
    case 'PillarResearched': {
      const p = s.pillars.get(e.data.pillar_id);
      if (p)
        s.pillars.set(p.id, {
          ...p,
          status: p.status === 'researching' ? 'draft' : p.status,
          researched_by: [...p.researched_by, e.data.job_id],
        });
      break;
    }
    case 'FactRecorded': {
      const f: FactState = { ...recordedFact(e.data), archived: false };
      s.facts.set(f.id, f);
      index(s, f);
      break;
    }
    case 'FactReviewed': {
      const f = s.facts.get(e.data.fact_id);
      if (f) s.facts.set(f.id, { ...f, review_status: e.data.review_status });
      break;
    }
    case 'FactUpdated': {
      const d = e.data;
      const f = s.facts.get(d.fact_id);
      if (!f) break;
      s.facts.set(f.id, {
        ...f,
        source_url: d.source_url_cleared ? null : d.source_url !== undefined ? d.source_url : f.source_url,
        confidence: d.confidence ?? f.confidence,
      });
      break;
    }
    case 'FactArchived': {
      const f = s.facts.get(e.data.fact_id);
      if (!f) break;
      unindex(s, f);
      s.facts.set(f.id, { ...f, archived: true });
      break;
    }
    case 'FactsDeleted': {
      // the texts go with the facts: a cached state keeps nothing of an erased subject
      for (const id of [...e.data.fact_ids, ...e.data.replaced_ids]) {
        const f = s.facts.get(id);
        if (f) unindex(s, f);
        s.facts.delete(id);
        s.erased.add(id);
      }
      break;
    }
    default:
      return exhaustive(e, s);
  }
  return s;
}

export const Knowledge: Aggregate<KnowledgeState, KnowledgeEvent> = {
  types: KNOWLEDGE_EVENT_TYPES,
  initial: emptyKnowledge,
  evolve: (s, e) => apply(own(s), e),
  replay: { own, apply },
};

/** A live fact: recorded, not archived, not deleted. */
export const liveFact = (s: KnowledgeState, id: string): FactState | undefined => {
  const f = s.facts.get(id);
  return f && !f.archived ? f : undefined;
};

/** The first live fact with this text that is not itself a hidden duplicate (what a new duplicate points to). */
export function originalWithText(s: KnowledgeState, text: string, except?: string): FactState | undefined {
  for (const id of s.texts.get(normalizeFactText(text)) ?? []) {
    const f = s.facts.get(id);
    if (f && id !== except && !f.archived && f.duplicate_of === null) return f;
  }
  return undefined;
}

/** The archived facts a fact replaced, newest first (its earlier texts). */
export function lineageOf(s: KnowledgeState, id: string): string[] {
  const out: string[] = [];
  const seen = new Set([id]);
  for (let f = s.facts.get(id); f?.replaces && !seen.has(f.replaces); f = s.facts.get(f.replaces)) {
    out.push(f.replaces);
    seen.add(f.replaces);
  }
  return out;
}
