import { describe, expect, it } from 'vitest';
import { decideDeleteFacts, decidePatchFact, decideRecordCandidates, manualFact } from '../../commands/knowledge/facts';
import { Knowledge } from '../../commands/knowledge/knowledge';
import { decideCreatePillar, decidePillarResearched } from '../../commands/knowledge/pillars';
import type { DomainEvent, EventData } from '../../src/domain/events';
import { given } from '../support/given';

const W = 'w1';
const pillar = (pillar_id: string, name: string): DomainEvent => ({
  type: 'PillarCreated',
  data: { pillar_id, website_id: W, name, description: '' },
});
const recorded = (fact_id: string, text: string, more: Partial<EventData<'FactRecorded'>> = {}): DomainEvent => ({
  type: 'FactRecorded',
  data: { ...manualFact({ fact_id, website_id: W, pillar_id: 'p1', text, confidence: 'high' }), ...more },
});

describe('knowledge deciders', () => {
  it('given a pillar, when one with the same name in another case is created, then nothing is appended and the existing one is answered', () => {
    const { result } = given(Knowledge, pillar('p1', 'Pricing'))
      .when((s) => decideCreatePillar(s, { website_id: W, name: ' PRICING ', pillar_id: 'p2' }))
      .then([]);
    expect(result).toEqual({ pillar_id: 'p1', created: false });
  });

  it('given a research report applied once, when it is applied again, then nothing is appended', () => {
    given(Knowledge, pillar('p1', 'Pricing'), { type: 'PillarResearched', data: { pillar_id: 'p1', job_id: 'j1', facts_found: 0 } })
      .when((s) => decidePillarResearched(s, { pillar_id: 'p1', job_id: 'j1', facts_found: 0 }))
      .then([]);
  });

  it('given a fact, when candidates repeat its text, an earlier candidate or a recorded id, then duplicates point to the first and known ids are skipped', () => {
    const c = (fact_id: string, text: string) => ({
      fact_id,
      pillar_id: 'p1',
      text,
      source_url: null,
      source_quote: text,
      confidence: 'medium' as const,
      source_type: 'site' as const,
      response_id: null,
      job_id: 'j1',
    });
    given(Knowledge, pillar('p1', 'Pricing'), recorded('f1', 'Acme is cheap.'))
      .when((s) =>
        decideRecordCandidates(s, W, [c('f1', 'Acme is cheap.'), c('c1', 'ACME is cheap'), c('c2', 'Acme is fast.'), c('c3', 'acme  is fast!')]),
      )
      .then((events) => {
        expect(events.map((e) => [(e.data as { fact_id: string }).fact_id, (e.data as { duplicate_of: string | null }).duplicate_of])).toEqual([
          ['c1', 'f1'],
          ['c2', null],
          ['c3', 'c2'],
        ]);
      });
  });

  it('given a fact whose text changed twice, when it is deleted, then its archived predecessors are erased with it', () => {
    given(
      Knowledge,
      recorded('f1', 'One.'),
      recorded('f2', 'Two.', { replaces: 'f1' }),
      { type: 'FactArchived', data: { fact_id: 'f1', replaced_by: 'f2' } },
      recorded('f3', 'Three.', { replaces: 'f2' }),
      { type: 'FactArchived', data: { fact_id: 'f2', replaced_by: 'f3' } },
    )
      .when((s) => decideDeleteFacts(s, ['f3', 'f1', 'nope']))
      .then([{ type: 'FactsDeleted', data: { fact_ids: ['f3'], replaced_ids: ['f2', 'f1'] } }]);
  });

  it('given a deleted fact, when it is patched, then it is not found', () => {
    given(Knowledge, recorded('f1', 'One.'), { type: 'FactsDeleted', data: { fact_ids: ['f1'], replaced_ids: [] } })
      .when((s) => decidePatchFact(s, 'f1', { confidence: 'low', new_fact_id: 'f2', website_id: W }))
      .then({ kind: 'not_found', message: 'Fact not found' });
  });

  it('given the same text sent again, then only the other fields change, in place', () => {
    given(Knowledge, recorded('f1', 'One.', { source_type: 'ai_response', response_id: 'r1' }))
      .when((s) => decidePatchFact(s, 'f1', { text: 'One.', confidence: 'low', new_fact_id: 'f2', website_id: W }))
      .then([{ type: 'FactUpdated', data: { fact_id: 'f1', confidence: 'low' } }]);
  });
});
