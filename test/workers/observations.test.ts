import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_IDS } from '../../src/domain/models';
import type { AnswerRequest } from '../../src/engines/port';
import { silentLogger } from '../../src/logger';
import { observationWorkerTypes, observeImport, parseExtractor } from '../../src/workers/observations';
import { buildSite, finishedRun } from '../support/answers';
import { simulatedEnginesWith } from '../support/engines';
import { call, startServer, type TestServer } from '../support/server';
import { until } from '../support/until';

const JUDGE = MODEL_IDS[1];

describe('observation extraction', () => {
  let s: TestServer;
  let key: string;
  const asked: AnswerRequest[] = [];
  const engines = simulatedEnginesWith(async (model, req, simulated) => {
    if (model !== JUDGE) return simulated();
    asked.push(req);
    const text =
      '```json\n[{"entity":"acme","attribute":"price","positive":true,"score":0.8,"text_span":"Acme is cheap."},{"entity":"Nobody","attribute":"Price","positive":false,"score":-0.5,"text_span":"x"}]\n```';
    return {
      text,
      citations: [],
      products: [],
      usage: { credits: 1, input_tokens: 120, output_tokens: 40 },
      provider_model: 'judge-1',
      latency_ms: 5,
    };
  });
  beforeAll(async () => {
    s = await startServer({ OBSERVATION_EXTRACTOR: `llm:${JUDGE}` }, {}, undefined, { engines });
    key = (await s.org('Observed')).key;
  });
  afterAll(async () => s?.close());

  it('given the extractor setting, then rules or a judge model of the catalogue, anything else refused', () => {
    expect(parseExtractor(undefined)).toEqual({ kind: 'rules' });
    expect(parseExtractor(`llm:${JUDGE}`)).toEqual({ kind: 'llm', model: JUDGE });
    expect(() => parseExtractor('llm:gpt-9')).toThrow(/OBSERVATION_EXTRACTOR/);
  });

  it('given an LLM judge, then its observations are recorded with the judge credits, unknown names dropped, once per answer', async () => {
    const site = await buildSite(s, key, { name: 'Acme', attributes: [{ name: 'Price' }] });
    const imp = await call(s, 'POST', '/api/v1/responses/import', {
      key,
      body: {
        website_id: site.id,
        responses: [{ prompt_id: site.prompts[0].id, model: MODEL_IDS[0], run_at: '2026-03-01T10:00:00Z', text: 'Acme is cheap. Others are not.' }],
      },
    });
    const responseId = imp.body.response_ids[0];
    // the server's observation workers ask the judge
    const importId = (
      await s.rt.database.db('aivis_events').where('type', 'ResponsesImported').whereRaw("data->>'website_id' = ?", [site.id]).first('data')
    ).data.import_id;
    const stream = await until('the judge to be asked', async () => {
      const x = await s.rt.store.readStream(`observations-import-${importId}`);
      return x.length > 0 && x;
    });
    expect(asked).toHaveLength(1);
    expect(asked[0].model).toBe(JUDGE);
    expect(asked[0].prompt).toContain('Acme is cheap. Others are not.');
    expect(stream.map((e) => e.type)).toEqual(['ObservationsRecorded', 'CreditsUsed']);
    expect((stream[0].data as { extractor: string; observations: unknown[] }).observations).toEqual([
      {
        observation_id: expect.any(String),
        entity_id: site.id,
        attribute_id: site.attributes[0].id,
        positive: true,
        score: 0.8,
        text_span: 'Acme is cheap.',
      },
    ]);
    expect(stream[1].data).toMatchObject({
      model: JUDGE,
      credits: 1,
      input_tokens: 120,
      output_tokens: 40,
      purpose: 'observation_judge',
      response_id: responseId,
    });
    // delivered again: the judge is not asked again and nothing more is recorded
    const ev = (await s.rt.store.readStream(`import-${importId}`)).find((e) => e.type === 'ResponsesImported')!;
    const deps = { store: s.rt.store, bus: s.rt.bus, engines, logger: silentLogger(), extractor: { kind: 'llm' as const, model: JUDGE } };
    expect(await observeImport(deps, { id: ev.id, data: ev.data, metadata: ev.metadata })).toBe(0);
    expect(asked).toHaveLength(1);
    expect(await s.rt.store.readStream(`observations-import-${importId}`)).toHaveLength(2);
  });

  it('given an engine answer, then the judge reads it on its own and records on the answer stream', async () => {
    const site = await buildSite(s, key, { name: 'Acme', attributes: [{ name: 'Price' }] });
    const sched = await call(s, 'POST', '/api/v1/prompt-schedules', {
      key,
      body: { website_id: site.id, name: 'One', models: [MODEL_IDS[0]], frequency: 'daily' },
    });
    const before = asked.length;
    const start = await call(s, 'POST', '/api/v1/response-streaming/start', {
      key,
      body: { website_id: site.id, schedule_id: sched.body.schedule.id },
    });
    const run = await finishedRun(s, key, site.id, start.body.run_id);
    expect(run.recorded).toBe(1);
    const responseId = (await s.rt.database.db('rm_responses').where({ run_id: start.body.run_id }).first('id')).id;
    const stream = await until('the judge to read the answer', async () => {
      const x = await s.rt.store.readStream(`observations-${responseId}`);
      return x.length > 0 && x;
    });
    expect(stream[0].type).toBe('ObservationsRecorded');
    expect(asked.length).toBe(before + 1);
  });
});

describe('observation extraction with the rules (the default)', () => {
  let s: TestServer;
  let key: string;
  // every answer says something about the brand's price, so each one has observations to find
  const engines = simulatedEnginesWith(async (_model, req, simulated) => {
    const a = await simulated();
    return { ...a, text: `${req.website?.brand.name} is very affordable. ${a.text}` };
  });
  beforeAll(async () => {
    s = await startServer({}, {}, undefined, { engines });
    key = (await s.org('Ruled')).key;
  });
  afterAll(async () => s?.close());

  it('given engine answers, then each answer is recorded with its observations in one append, and only import batches ride the bus to the observation worker', async () => {
    expect(observationWorkerTypes(parseExtractor(undefined))).not.toContain('ResponseRecorded');
    expect(observationWorkerTypes(parseExtractor(`llm:${JUDGE}`))).toContain('ResponseRecorded');
    const site = await buildSite(s, key, { name: 'Acme', attributes: [{ name: 'Price' }] });
    const start = await call(s, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    expect(start.status).toBe(202);
    const run = await finishedRun(s, key, site.id, start.body.run_id);
    expect(run.recorded).toBeGreaterThan(0);
    // every answer has its observations (the read models catch up within the run status' wait; under a loaded test
    // machine that wait can run out, so this polls)
    const answers = await until('the answers listed', async () => {
      const x = (await s.rt.database.db('rm_responses').where({ run_id: start.body.run_id }).select('id')) as { id: string }[];
      return x.length === run.recorded && x;
    });
    const observed = await until('the observations listed', async () => {
      const x = await s.rt.database
        .db('rm_observations')
        .whereIn(
          'response_id',
          answers.map((a) => a.id),
        )
        .select('response_id', 'entity_id', 'attribute_id', 'positive', 'extractor');
      return new Set(x.map((o: { response_id: string }) => o.response_id)).size === answers.length && x;
    });
    // the sentence every answer opens with is found in each (the simulated rest may say more, either way)
    type Row = { response_id: string; entity_id: string; attribute_id: string; positive: boolean; extractor: string };
    for (const a of answers) {
      expect(
        observed.some(
          (o: Row) =>
            o.response_id === a.id && o.entity_id === site.id && o.attribute_id === site.attributes[0].id && o.positive && o.extractor === 'rules',
        ),
      ).toBe(true);
    }
    // in the answer's own stream, with its credits: recorded together or not at all
    const stream = await s.rt.store.readStream(`response-${answers[0].id}`);
    expect(stream.map((e) => e.type)).toEqual(['ResponseRecorded', 'CreditsUsed', 'ObservationsRecorded']);
    expect(new Set(stream.map((e) => e.position[0])).size).toBe(1);
  });
});
