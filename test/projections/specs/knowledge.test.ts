import { randomUUID } from 'node:crypto';
import { describe, it } from 'vitest';
import { knowledgeProjection } from '../../../projections/knowledge';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

const { org, site, given } = projectionSpec(knowledgeProjection);
const pillar = randomUUID();
const fact = randomUUID();

const pillarCreated = event('PillarCreated', { pillar_id: pillar, website_id: site, name: 'Pricing', description: 'What it costs' });
const recorded = (id: string, over: { text?: string | null; replaces?: string | null } = {}) =>
  event('FactRecorded', {
    fact_id: id,
    website_id: site,
    pillar_id: pillar,
    text: 'Plans start at $10',
    source_url: 'https://acme.example/pricing',
    confidence: 'high',
    review_status: 'pending',
    source_type: 'site',
    response_id: null,
    duplicate_of: null,
    replaces: null,
    job_id: null,
    ...over,
  } as never);

describe('knowledge read model: pillars and facts of a website', () => {
  it('given nothing, when a pillar is created, then it is researching; when researched, it is a draft', async () => {
    await given()
      .when(pillarCreated)
      .then({ rm_kb_pillars: [{ id: pillar, organization_id: org, website_id: site, name: 'Pricing', status: 'researching', created_at: T0 }] });
    await given(pillarCreated)
      .when(event('PillarResearched', { pillar_id: pillar, job_id: pillar, facts_found: 3 }, { meta: { time: T1 } }))
      .then({ rm_kb_pillars: [{ id: pillar, status: 'draft', last_researched_at: T1 }] });
  });

  it('given a published pillar, when research reports back, then it stays published', async () => {
    await given(pillarCreated, event('PillarUpdated', { pillar_id: pillar, status: 'published' }))
      .when(event('PillarResearched', { pillar_id: pillar, job_id: pillar, facts_found: 1 }))
      .then({ rm_kb_pillars: [{ id: pillar, status: 'published' }] });
  });

  it('given a fact, when it is reviewed and its confidence changes, then its row says both', async () => {
    await given(recorded(fact))
      .when(
        event('FactReviewed', { fact_id: fact, review_status: 'approved' }),
        event('FactUpdated', { fact_id: fact, confidence: 'low', source_url_cleared: true }),
      )
      .then({ rm_kb_facts: [{ id: fact, text: 'Plans start at $10', review_status: 'approved', confidence: 'low', source_url: null }] });
  });

  it('given a fact erased, when its recording is applied again (a rebuild), then nothing of it is kept', async () => {
    await given()
      .when(recorded(fact, { text: null }))
      .then({ rm_kb_facts: [] });
  });

  it('given a fact replaced by a new text, when both are deleted, then neither row is left and other facts stay', async () => {
    const next = randomUUID();
    const kept = randomUUID();
    await given(
      recorded(fact),
      recorded(next, { text: 'Plans start at $12', replaces: fact }),
      event('FactArchived', { fact_id: fact, replaced_by: next }),
      recorded(kept),
    )
      .when(event('FactsDeleted', { fact_ids: [next], replaced_ids: [fact] }))
      .then({ rm_kb_facts: [{ id: kept }] });
  });
});
