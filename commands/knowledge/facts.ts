import { z } from 'zod';
import { conflict, type DomainError, notFound } from '../../src/domain/errors';
import type { DomainEvent, EventData } from '../../src/domain/events';
import { text, Uuid, WebsiteId } from '../../src/domain/schemas';
import type { Decision } from '../handle';
import {
  type Confidence,
  type FactState,
  KNOWLEDGE_MESSAGES,
  type KnowledgeState,
  lineageOf,
  liveFact,
  normalizeFactText,
  originalWithText,
  type SourceType,
} from './knowledge';

export const CONFIDENCES = ['high', 'medium', 'low'] as const;
export const MAX_DELETE_FACTS = 50;

const ConfidenceInput = z.enum(CONFIDENCES, { error: `must be one of ${CONFIDENCES.join(', ')}` });
const FactText = text()
  .trim()
  .min(1, 'must not be empty')
  .max(2000, 'must be at most 2000 characters')
  .describe('The fact, one statement about the brand');
/** An http(s) URL where the fact can be checked. */
const SourceUrl = text()
  .trim()
  .max(2048, 'must be at most 2048 characters')
  .refine((u) => {
    try {
      const url = new URL(u);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http or https URL');

export const CreateFact = z.strictObject({
  website_id: WebsiteId,
  text: FactText,
  pillar_id: Uuid.nullable().optional().describe('The pillar it belongs to; omitted or null: unfiled'),
  source_url: SourceUrl.optional().describe('Where the fact can be checked'),
  confidence: ConfidenceInput.default('high').describe('high (default), medium or low'),
});
export type CreateFact = z.output<typeof CreateFact>;

/** Only the supplied fields change; `source_url: ""` clears it. */
export const PatchFactFields = z.strictObject({
  text: FactText.optional().describe(
    'A new text makes a new fact and archives this one; facts captured from AI responses, hidden duplicates and rejected facts keep theirs',
  ),
  source_url: z
    .union([z.literal(''), SourceUrl], { error: 'must be an http or https URL, or "" to clear it' })
    .optional()
    .describe('Where the fact can be checked; "" clears it'),
  confidence: ConfidenceInput.optional().describe('high, medium or low'),
});
export const somePatchField: [(p: { text?: string; source_url?: string; confidence?: string }) => boolean, { message: string; path: string[] }] = [
  (p) => p.text !== undefined || p.source_url !== undefined || p.confidence !== undefined,
  { message: 'give at least one of text, source_url, confidence', path: ['text'] },
];
export const PatchFact = PatchFactFields.refine(...somePatchField);
export type PatchFact = z.output<typeof PatchFact>;

export const ReviewFact = z.strictObject({
  decision: z.enum(['approve', 'reject'], { error: 'must be approve or reject' }).describe('approve or reject the fact'),
});
export type ReviewFact = z.output<typeof ReviewFact>;

export const DeleteFacts = z.strictObject({
  website_id: WebsiteId,
  fact_ids: z
    .array(Uuid, { error: 'must be an array of fact ids' })
    .min(1, `must have 1 to ${MAX_DELETE_FACTS} ids`)
    .max(MAX_DELETE_FACTS, `must have 1 to ${MAX_DELETE_FACTS} ids`)
    .describe(`The facts to delete for good (1 to ${MAX_DELETE_FACTS})`),
});
export type DeleteFacts = z.output<typeof DeleteFacts>;

type Recorded = EventData<'FactRecorded'>;

/** A manual fact as recorded: approved at once, from no answer or job, replacing nothing. */
export const manualFact = (
  f: Pick<Recorded, 'fact_id' | 'website_id' | 'pillar_id' | 'text' | 'confidence'> & { source_url?: string },
): Recorded => ({
  fact_id: f.fact_id,
  website_id: f.website_id,
  pillar_id: f.pillar_id,
  text: f.text,
  ...(f.source_url ? { source_url: f.source_url } : {}),
  confidence: f.confidence,
  review_status: 'approved',
  source_type: 'manual',
  response_id: null,
  duplicate_of: null,
  replaces: null,
  job_id: null,
});

/** A manual fact: approved at once; a pillar that is not the website's is 404. */
export function decideCreateFact(s: KnowledgeState, cmd: CreateFact & { fact_id: string }): Decision<{ fact_id: string }> | DomainError {
  const pillar_id = cmd.pillar_id ?? null;
  if (pillar_id !== null && !s.pillars.has(pillar_id)) return notFound(KNOWLEDGE_MESSAGES.pillarNotFound);
  return { events: [{ type: 'FactRecorded', data: manualFact({ ...cmd, pillar_id }) }], result: { fact_id: cmd.fact_id } };
}

/** A candidate fact found by research (its id derived from the job and where it was found). */
export interface Candidate {
  fact_id: string;
  pillar_id: string;
  text: string;
  source_url: string | null;
  source_quote: string | null;
  confidence: Confidence;
  source_type: SourceType;
  response_id: string | null;
  job_id: string;
}

/**
 * Research's candidates arrive pending; a text some live fact has already (or an earlier candidate of the batch) is
 * recorded as a hidden duplicate of it. Candidates recorded before (a redelivered step) or deleted since are skipped.
 */
export function decideRecordCandidates(
  s: KnowledgeState,
  website_id: string,
  candidates: readonly Candidate[],
): Decision<{ recorded: number; duplicates: number }> | DomainError {
  const events: DomainEvent[] = [];
  const seen = new Map<string, string>();
  let duplicates = 0;
  for (const c of candidates) {
    if (s.facts.has(c.fact_id) || s.erased.has(c.fact_id)) continue;
    const key = normalizeFactText(c.text);
    if (!key) continue;
    const duplicate_of = originalWithText(s, c.text)?.id ?? seen.get(key) ?? null;
    if (duplicate_of) duplicates++;
    else seen.set(key, c.fact_id);
    events.push({
      type: 'FactRecorded',
      data: {
        fact_id: c.fact_id,
        website_id,
        pillar_id: c.pillar_id,
        text: c.text,
        ...(c.source_url ? { source_url: c.source_url } : {}),
        ...(c.source_quote ? { source_quote: c.source_quote } : {}),
        confidence: c.confidence,
        review_status: 'pending',
        source_type: c.source_type,
        response_id: c.response_id,
        duplicate_of,
        replaces: null,
        job_id: c.job_id,
      },
    });
  }
  return { events, result: { recorded: events.length, duplicates } };
}

/** Approve or reject a live fact (hidden duplicates are not reviewed); the same decision again changes nothing. */
export function decideReviewFact(s: KnowledgeState, factId: string, cmd: ReviewFact): Decision<{ fact_id: string }> | DomainError {
  const f = liveFact(s, factId);
  if (!f) return notFound(KNOWLEDGE_MESSAGES.factNotFound);
  if (f.duplicate_of !== null) return conflict(KNOWLEDGE_MESSAGES.duplicateReview);
  const review_status = cmd.decision === 'approve' ? 'approved' : 'rejected';
  if (f.review_status === review_status) return { events: [], result: { fact_id: f.id } };
  return { events: [{ type: 'FactReviewed', data: { fact_id: f.id, review_status } }], result: { fact_id: f.id } };
}

export interface PatchFactResult {
  /** the new fact's id when the text changed, else the fact's own */
  fact_id: string;
  /** the addressed fact's id */
  before_id: string;
  text_changed: boolean;
}

/** Why a fact's text cannot change, or null. */
function uneditable(f: FactState): DomainError | null {
  if (f.source_type === 'ai_response') return conflict(KNOWLEDGE_MESSAGES.capturedFromResponse);
  if (f.duplicate_of !== null) return conflict(KNOWLEDGE_MESSAGES.duplicate);
  if (f.review_status === 'rejected') return conflict(KNOWLEDGE_MESSAGES.rejected);
  return null;
}

/**
 * PATCH a fact (spec, "States and transitions", Fact rows): only the supplied fields change. A new text makes a new
 * fact (new id, same pillar, provenance and review status) and archives the addressed one, so it answers 404 from
 * then on; source_url and confidence alone change in place. Uneditable facts and a text another fact captured from
 * the same answer has are 409; an archived fact is 404.
 */
export function decidePatchFact(
  s: KnowledgeState,
  factId: string,
  cmd: PatchFact & { new_fact_id: string; website_id: string },
): Decision<PatchFactResult> | DomainError {
  const f = liveFact(s, factId);
  if (!f) return notFound(KNOWLEDGE_MESSAGES.factNotFound);
  const source_url = cmd.source_url === undefined ? f.source_url : cmd.source_url === '' ? null : cmd.source_url;
  const confidence = cmd.confidence ?? f.confidence;
  const newText = cmd.text !== undefined && cmd.text !== f.text ? cmd.text : undefined;
  if (newText !== undefined) {
    const refused = uneditable(f);
    if (refused) return refused;
    if (f.response_id !== null) {
      const key = normalizeFactText(newText);
      for (const id of s.texts.get(key) ?? []) {
        const other = s.facts.get(id);
        if (other && other.id !== f.id && !other.archived && other.response_id === f.response_id) return conflict(KNOWLEDGE_MESSAGES.collision);
      }
    }
    const events: DomainEvent[] = [
      {
        type: 'FactRecorded',
        data: {
          fact_id: cmd.new_fact_id,
          website_id: cmd.website_id,
          pillar_id: f.pillar_id,
          text: newText,
          ...(source_url ? { source_url } : {}),
          ...(f.source_quote ? { source_quote: f.source_quote } : {}),
          confidence,
          review_status: f.review_status,
          source_type: f.source_type,
          response_id: f.response_id,
          duplicate_of: null,
          replaces: f.id,
          job_id: null,
        },
      },
      { type: 'FactArchived', data: { fact_id: f.id, replaced_by: cmd.new_fact_id } },
    ];
    return { events, result: { fact_id: cmd.new_fact_id, before_id: f.id, text_changed: true } };
  }
  const data: EventData<'FactUpdated'> = { fact_id: f.id };
  if (source_url !== f.source_url) {
    if (source_url === null) data.source_url_cleared = true;
    else data.source_url = source_url;
  }
  if (confidence !== f.confidence) data.confidence = confidence;
  const changed = Object.keys(data).length > 1;
  return { events: changed ? [{ type: 'FactUpdated', data }] : [], result: { fact_id: f.id, before_id: f.id, text_changed: false } };
}

export interface DeleteFactsResult {
  success: true;
  deleted_ids: string[];
  not_found_ids: string[];
}

/** Live facts of this website are deleted for good, with the archived facts whose texts they replaced; the rest are not found. */
export function decideDeleteFacts(s: KnowledgeState, ids: readonly string[]): Decision<DeleteFactsResult> | DomainError {
  const unique = [...new Set(ids)];
  const deleted = unique.filter((id) => liveFact(s, id));
  const not_found_ids = unique.filter((id) => !liveFact(s, id));
  const replaced = [...new Set(deleted.flatMap((id) => lineageOf(s, id)))];
  return {
    events: deleted.length ? [{ type: 'FactsDeleted', data: { fact_ids: deleted, replaced_ids: replaced } }] : [],
    result: { success: true, deleted_ids: deleted, not_found_ids },
  };
}
