import { type AnswerAnalysis, analyzeAnswer } from '../../src/analysis/answer';
import { dispatch, handledTypes, type Projection, migrateSql } from '../../src/eventstore/projection';
import { siteEntities } from '../site-entities';
import { CONTENT_TABLES_SQL, insertContentRows } from './content-tables';
import { EVIDENCE_SQL, insertEvidence, retrievedOf, type StoredRetrieved } from './evidence';
import { type AnswersBatch, handlers, type Recorded } from './handlers';
import { rederive } from './rederive';
import { ANSWERS_SQL } from './schema';
import { appendFacts, compile, insertProducts, insertResponses, nextVersion } from './writers';

/**
 * The answers and what analysis derives from them (CONTRACT.md, Analysis):
 * - rm_responses: every answer as recorded (text, citations, product cards), the listing's source;
 * - rm_fact_chunks: per website and UTC day, in parts of at most PART_ROWS answers (a new answer rewrites one part,
 *   never a whole day), the metric facts (src/analysis/facts.ts): positions and citations of each tracked entity in
 *   each answer, with the answer's prompt, model, location and schedule;
 * - rm_fact_sites: per website, the tracked entities the chunks are laid out for, and a version that moves with
 *   every write (readers reload what changed) and a generation that moves with every re-derivation;
 * - rm_response_products: product cards with the entity each belongs to;
 * - rm_analysis_entities: the brand and competitors analysis matches, kept from the events themselves.
 * A change of a website's entities (a competitor added, renamed, re-identified or removed) re-derives its whole
 * history in the same transaction: readers see the old derivation or the new one, never a mix.
 */
export const answersProjection: Projection = {
  name: 'answers',
  version: 6,
  tables: [
    'rm_responses',
    'rm_fact_chunks',
    'rm_fact_sites',
    'rm_response_products',
    'rm_analysis_entities',
    'rm_content_answers',
    'rm_content_cites',
    'rm_source_days',
    'rm_response_queries',
  ],
  handles: handledTypes(handlers),
  migrate: migrateSql(`${ANSWERS_SQL}${CONTENT_TABLES_SQL}${EVIDENCE_SQL}`),
  async apply(trx, events) {
    const dirty = new Set<string>();
    const recorded: Recorded[] = [];
    const batch: AnswersBatch = { trx, dirty, recorded };
    for (const e of events) {
      const pending = dispatch(handlers, e, batch);
      if (pending) await pending;
    }
    // each answer analyzed once, here: its facts, its stored analysis (the answers listing) and the content hub's rows
    // all come from this one analysis (a website re-derived below is analyzed again with its new entities)
    const tracked = await siteEntities(trx, [...new Set(recorded.map((e) => e.data.website_id))]);
    const analyses = new Map<string, AnswerAnalysis>();
    for (const e of recorded)
      analyses.set(e.data.response_id, analyzeAnswer(compile(e.data.website_id, tracked.get(e.data.website_id) ?? []), e.data));
    const retrieved = new Map<string, StoredRetrieved[]>();
    for (const e of recorded) retrieved.set(e.data.response_id, retrievedOf(analyses.get(e.data.response_id)!, e.data.retrieved));
    const version = await nextVersion(trx);
    const fresh = await insertResponses(trx, recorded, analyses, retrieved, version, tracked);
    if (fresh.length) {
      await insertEvidence(trx, fresh, retrieved);
      await insertContentRows(trx, fresh, analyses, tracked);
      const appendable = fresh.filter((e) => !dirty.has(e.data.website_id));
      const mismatched = await appendFacts(trx, appendable, tracked, version, analyses);
      for (const w of mismatched) dirty.add(w);
      await insertProducts(
        trx,
        fresh.filter((e) => e.data.products.length > 0),
        tracked,
      );
    }
    for (const w of dirty) await rederive(trx, w, version);
  },
};
