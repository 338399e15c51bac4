import { describe, expect, it } from 'vitest';
import { Catalog } from '../../commands/catalog/catalog';
import { decideImport, importedResponseId, type ImportResponses } from '../../commands/responses/import-responses';
import { decideOutcome, responseIdOf } from '../../commands/responses/record-outcome';
import { decideStartRun } from '../../commands/responses/start-run';
import type { DomainEvent } from '../../src/domain/events';
import { deterministicId } from '../../src/domain/ids';
import { MODEL_IDS } from '../../src/domain/models';
import { EngineError } from '../../src/engines/port';
import { aUnit } from '../support/events';
import { given } from '../support/given';
import { competitorAdded, promptAnswered, promptCreated, promptDeleted, scheduleCreated, W } from './catalog-events';

const locationCreated = (id: string): DomainEvent => ({
  type: 'LocationCreated',
  data: { location_id: id, location: id, country: 'France', region: null, city: null },
});
const run = { run_id: 'r1', website_id: W, schedule_id: null, trigger: 'manual' as const, day: '2026-03-01' };

describe('start run', () => {
  it('given active, paused and deleted prompts and two locations, then one unit per active prompt x model x location', () => {
    given(
      Catalog,
      promptCreated('p1'),
      promptCreated('p2', null, { status: 'paused' }),
      promptCreated('p3'),
      promptDeleted('p3', false),
      locationCreated('l1'),
      locationCreated('l2'),
    )
      .when((s) => decideStartRun(s, run))
      .then((events) => {
        expect(events[0]).toEqual({ type: 'RunStarted', data: { ...run, models: [...MODEL_IDS], total: MODEL_IDS.length * 2 } });
        const units = events
          .slice(1)
          .map((e) => (e.type === 'ResponseRequested' ? `${e.data.prompt_id}/${e.data.location_id}/${e.data.model}` : e.type));
        expect(units).toHaveLength(MODEL_IDS.length * 2);
        expect(new Set(units).size).toBe(units.length);
        expect(units.every((u) => u.startsWith('p1/'))).toBe(true);
      });
  });

  it('given a custom schedule, then its models; without locations, one unit per prompt x model with no location', () => {
    given(Catalog, promptCreated('p1'), scheduleCreated('s1', { models: [MODEL_IDS[3], MODEL_IDS[4]] }))
      .when((s) => decideStartRun(s, { ...run, schedule_id: 's1' }))
      .then((events) => {
        expect(events.map((e) => (e.type === 'ResponseRequested' ? [e.data.model, e.data.location_id, e.data.schedule_id] : e.type))).toEqual([
          'RunStarted',
          [MODEL_IDS[3], null, 's1'],
          [MODEL_IDS[4], null, 's1'],
        ]);
      });
  });

  it('given the same run planned twice, then the same event ids (a retried start writes nothing new)', () => {
    const { result: _r, state } = given(Catalog, promptCreated('p1'))
      .when(() => ({ events: [], result: null }))
      .then([]);
    const a = decideStartRun(state, run);
    const b = decideStartRun(state, run);
    if ('kind' in a || 'kind' in b) throw new Error('refused');
    expect(a.events.map((e) => e.id)).toEqual(b.events.map((e) => e.id));
    expect(a.events[1].id).toBe(deterministicId('request', 'r1', 'p1', MODEL_IDS[0], ''));
  });

  it('given an unknown or archived schedule, or no active prompt, then refused', () => {
    given(Catalog, promptCreated('p1'))
      .when((s) => decideStartRun(s, { ...run, schedule_id: 'nope' }))
      .then({ kind: 'not_found', message: 'Schedule not found' });
    given(Catalog, promptCreated('p1'), scheduleCreated('s1'), { type: 'PromptScheduleArchived', data: { schedule_id: 's1' } })
      .when((s) => decideStartRun(s, { ...run, schedule_id: 's1' }))
      .then({ kind: 'conflict', message: 'Schedule is archived', details: undefined });
    given(Catalog, promptCreated('p1', null, { status: 'paused' }))
      .when((s) => decideStartRun(s, run))
      .then({ kind: 'invalid', message: 'website_id: the website has no active prompts to run' });
  });
});

describe('unit outcome', () => {
  const req = aUnit({ request_id: 'q1', run_id: 'r1', website_id: W, prompt_id: 'p1' });

  it('given an answer, then the answer and its credits, with ids derived from the unit', () => {
    const events = decideOutcome(req, {
      kind: 'answered',
      run_at: '2026-03-01T10:00:00.000Z',
      answer: {
        text: 'Hi',
        citations: ['https://a.example'],
        products: [],
        usage: { credits: 2, input_tokens: 3, output_tokens: 4 },
        provider_model: 'x',
        latency_ms: 12,
      },
    });
    expect(events.map((e) => [e.id, e.type])).toEqual([
      [deterministicId('outcome', 'q1'), 'ResponseRecorded'],
      [deterministicId('credits', 'q1'), 'CreditsUsed'],
    ]);
    expect(events[0].data).toMatchObject({
      response_id: responseIdOf('q1'),
      request_id: 'q1',
      run_id: 'r1',
      source: 'engine',
      text: 'Hi',
      observations_supplied: false,
    });
    expect(events[1].data).toEqual({
      website_id: W,
      model: MODEL_IDS[0],
      credits: 2,
      input_tokens: 3,
      output_tokens: 4,
      run_id: 'r1',
      response_id: responseIdOf('q1'),
      purpose: 'response',
    });
  });

  it('given a failure, then one ResponseFailed under the same id an answer would have had (one outcome per unit)', () => {
    const err = new EngineError('rate_limited', 'slow down', { attempts: 4 });
    const events = decideOutcome(req, { kind: 'failed', error_kind: err.kind, message: err.message, attempts: 4 });
    expect(events).toEqual([
      {
        id: deterministicId('outcome', 'q1'),
        type: 'ResponseFailed',
        data: {
          request_id: 'q1',
          run_id: 'r1',
          website_id: W,
          prompt_id: 'p1',
          model: MODEL_IDS[0],
          location_id: null,
          error_kind: 'rate_limited',
          message: 'slow down',
          attempts: 4,
        },
      },
    ]);
  });
});

describe('import', () => {
  const item = (over: object = {}) => ({ prompt_id: 'p1', model: MODEL_IDS[0], run_at: '2026-03-01T10:00:00.000Z', text: 'x', ...over });
  const input = (responses: object[]) => ({ website_id: W, responses }) as ImportResponses;
  const ids = ['n1', 'n2', 'n3', 'n4'];

  it('given items without an external_id, then their answers take the ids the caller passed in (decided again, the same ids)', () => {
    const { result, state } = given(Catalog, promptCreated('p1'))
      .when((s) => decideImport(s, W, input([item(), item({ external_id: 'e' }), item()]), new Set(), ids))
      .then([{ type: 'PromptAnswered', data: { prompt_id: 'p1' } }]);
    expect(result!.map((p) => p.response_id)).toEqual(['n1', importedResponseId(W, 'e'), 'n3']);
    expect(decideImport(state, W, input([item(), item({ external_id: 'e' }), item()]), new Set(), ids)).toEqual(
      decideImport(state, W, input([item(), item({ external_id: 'e' }), item()]), new Set(), ids),
    );
  });

  it('given prompts not answered before, then they are marked answered once; known and repeated external ids are skipped', () => {
    const { result } = given(Catalog, promptCreated('p1'), promptCreated('p2'), promptAnswered('p2'))
      .when((s) =>
        decideImport(
          s,
          W,
          input([item({ external_id: 'a' }), item({ external_id: 'b', prompt_id: 'p2' }), item({ external_id: 'a' }), item({ external_id: 'k' })]),
          new Set(['k']),
          ids,
        ),
      )
      .then([{ type: 'PromptAnswered', data: { prompt_id: 'p1' } }]);
    expect(result!.map((p) => p.skip)).toEqual([false, false, true, true]);
    expect(result![2].response_id).toBe(result![0].response_id);
  });

  it('given a skipped item only, then its prompt is not marked', () => {
    given(Catalog, promptCreated('p1'))
      .when((s) => decideImport(s, W, input([item({ external_id: 'k' })]), new Set(['k']), ids))
      .then([]);
  });

  it('given a hard-deleted prompt, or an observation of an unknown entity, then the item is named', () => {
    given(Catalog, promptCreated('p1'), promptCreated('p2'), promptDeleted('p2', false))
      .when((s) => decideImport(s, W, input([item(), item({ prompt_id: 'p2' })]), new Set(), ids))
      .then({ kind: 'invalid', message: 'responses[1].prompt_id: Prompt not found' });
    given(Catalog, promptCreated('p1'), competitorAdded('c1'), {
      type: 'AttributeCreated',
      data: { attribute_id: 'a1', name: 'Price', description: null },
    })
      .when((s) =>
        decideImport(
          s,
          W,
          input([
            item({
              observations: [
                { entity_id: 'c1', attribute_id: 'a1', positive: true, text_span: 'x' },
                { entity_id: 'zz', attribute_id: 'a1', positive: true, text_span: 'x' },
              ],
            }),
          ]),
          new Set(),
          ids,
        ),
      )
      .then({
        kind: 'invalid',
        message: "responses[0].observations[1].entity_id: must be the website_id (the brand) or one of its competitors' ids",
      });
  });
});
