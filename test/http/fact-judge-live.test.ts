import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importStream } from '../../commands/responses/import-responses';
import { FACT_JUDGE_HEAD } from '../../src/analysis/fact-judge';
import { MODEL_IDS, MODELS } from '../../src/domain/models';
import { createEngines } from '../../src/engines/registry';
import { START, type TypedEvent } from '../../src/eventstore/port';
import { decodeEvent } from '../../src/domain/events';
import { factJudgeFollower, factJudgeStream } from '../../src/workers/entity-quality';
import { type FakeProvider, type Hit, loopbackFetch, startFakeProvider } from '../engines/support';
import { buildSite, importAnswers } from '../support/answers';
import { call, startServer, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { until } from '../support/until';

const writer = MODELS.find((m) => m.adapter === 'openai-compatible')!;
const PRICE = 'Acme Pro costs 49 dollars per month.';

/** The provider's reply to a judge prompt: the sentence saying 99 dollars contradicts fact 1; a prompt about Refusco is refused (401). */
function judgeReply(hit: Hit) {
  const prompt = String(hit.body?.messages?.at(-1)?.content ?? '');
  if (prompt.includes('Refusco')) return { status: 401, body: { error: { message: 'invalid key' } } };
  const lines = prompt.split('\n');
  const at = lines.findIndex((l) => /^\d+\. .*99 dollars/.test(l));
  const content = at < 0 ? '[]' : `\`\`\`json\n[{"sentence": ${Number.parseInt(lines[at], 10)}, "fact": 1}, {"sentence": 42, "fact": 1}]\n\`\`\``;
  return { body: { model: writer.provider_model, choices: [{ message: { content } }] } };
}

describe('the live fact judge (the writer engine over a provider on 127.0.0.1)', () => {
  let provider: FakeProvider;
  let s: TestServer;
  let w: World;
  const engines = () =>
    createEngines({
      mode: 'live',
      env: { [writer.api_key_env]: 'k' },
      fetch: loopbackFetch,
      options: { retries: 0, perModel: { [writer.id]: { baseUrl: provider.url } } },
    });
  beforeAll(async () => {
    provider = await startFakeProvider();
    provider.script((hit) => judgeReply(hit));
    s = await startServer({ CONTENT_MODEL: writer.id }, {}, undefined, { engines: engines() });
    w = await buildWorld(s);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await provider?.close();
  });

  const judgeHits = () => provider.hits.filter((h) => JSON.stringify(h.body ?? '').includes(FACT_JUDGE_HEAD));
  const site = async (name: string, texts: string[]) => {
    const built = await buildSite(s, w.a.key, { name });
    const f = await call(s, 'POST', '/api/v1/knowledge-base/facts', {
      key: w.a.key,
      body: { website_id: built.id, text: PRICE.replace('Acme', name) },
    });
    expect(f.status, JSON.stringify(f.body)).toBe(201);
    const responses = texts.map((text, i) => ({ prompt_id: built.prompts[0].id, model: MODEL_IDS[0], run_at: `2026-11-0${i + 1}T10:00:00Z`, text }));
    const imported = await importAnswers(s, w.a.key, built.id, responses);
    return { id: built.id, fact: f.body.fact.id as string, ids: imported.response_ids as string[] };
  };
  const charges = async (responseId: string) => (await s.rt.store.readStream(factJudgeStream(responseId))).map((e) => e.data);

  it('given an answer contradicting a fact, then the writer is asked its sentences about the brand, the conflict is listed, and its credits are recorded once; an answer not naming the brand asks nothing', async () => {
    const a = await site('Acme', ['Acme is popular. Acme Pro costs 99 dollars per month. Zeta is cheaper.', 'Zeta Pro costs 99 dollars per month.']);
    const r = await until('the conflict', async () => {
      const l = await call(s, 'GET', '/api/v1/knowledge-base/conflicts', { key: w.a.key, query: { website_id: a.id } });
      return l.body.conflicts?.length ? l.body.conflicts : false;
    });
    expect(r).toEqual([
      {
        id: expect.any(String),
        response_id: a.ids[0],
        fact_id: a.fact,
        fact_text: PRICE,
        answer_excerpt: 'Acme Pro costs 99 dollars per month.',
        model: MODEL_IDS[0],
        detected_at: expect.any(String),
        status: 'open',
      },
    ]);
    const asked = judgeHits();
    expect(asked).toHaveLength(1);
    const prompt = asked[0].body.messages.at(-1).content as string;
    expect(prompt).toContain('1. Acme is popular.\n2. Acme Pro costs 99 dollars per month.');
    expect(prompt).not.toContain('Zeta');
    expect(prompt).toContain(`FACTS\n1. ${PRICE}`);
    expect(await until('the charge', async () => (await charges(a.ids[0])).length && charges(a.ids[0]))).toEqual([
      { kind: 'fact_judge', credits: 1, website_id: a.id, ref_id: a.ids[0], model: writer.id },
    ]);
    expect(await charges(a.ids[1])).toEqual([]);

    // when: the import's answers are followed again (a crash before the follower's checkpoint moved), then the
    // writer is not asked again and nothing more is charged
    const all = await s.rt.store.readAll(START, 100_000);
    const done = all.find((e) => e.type === 'ResponsesImported' && (e.data as { response_ids: string[] }).response_ids.includes(a.ids[0]))!;
    const recorded = (await s.rt.store.readStream(importStream((done.data as { import_id: string }).import_id))).filter(
      (e) => e.type === 'ResponseRecorded',
    );
    expect(recorded.length).toBeGreaterThan(0);
    const follower = factJudgeFollower({
      store: s.rt.store,
      db: s.rt.database.db,
      logger: s.rt.logger,
      factJudge: { engines: engines(), model: writer.id },
    });
    await follower.follow!(recorded.map((e) => ({ ...e, data: decodeEvent(e.id, e.type, e.data, e.metadata.schema_version).data }) as TypedEvent));
    expect(judgeHits()).toHaveLength(1);
    expect(await charges(a.ids[0])).toHaveLength(1);
  }, 60_000);

  it('given one answer judged by two followers at once (an instance that lost its lead mid-batch), then it is charged once and its conflict recorded once', async () => {
    const a = await site('Twice', ['Twice Pro costs 99 dollars per month.']);
    await until('the first conflict', async () => (await charges(a.ids[0])).length > 0);
    const [recorded] = (await s.rt.store.readAll(START, 100_000)).filter(
      (e) => e.type === 'ResponseRecorded' && (e.data as { response_id: string }).response_id === a.ids[0],
    );
    // the same answer as a new one: a response id of its own, so neither follower finds a charge before asking
    const fresh = {
      ...recorded,
      data: { ...decodeEvent(recorded.id, recorded.type, recorded.data, recorded.metadata.schema_version).data, response_id: randomUUID() },
    } as TypedEvent;
    const deps = { store: s.rt.store, db: s.rt.database.db, logger: s.rt.logger, factJudge: { engines: engines(), model: writer.id } };
    await Promise.all([factJudgeFollower(deps).follow!([fresh]), factJudgeFollower(deps).follow!([fresh])]);
    const id = (fresh.data as { response_id: string }).response_id;
    expect(await charges(id)).toHaveLength(1);
    await until('its conflict listed', async () => (await s.rt.database.db('rm_fact_conflicts').where({ response_id: id })).length > 0);
    await s.settled();
    expect(await s.rt.database.db('rm_fact_conflicts').where({ response_id: id }).select('id')).toHaveLength(1);
  }, 60_000);

  it('given the writer refusing for good, then no conflict and no charge, and the answer is not asked again', async () => {
    const before = provider.hits.length;
    const r = await site('Refusco', ['Refusco Pro costs 99 dollars per month.']);
    await until('the refusal', async () => provider.hits.length > before);
    await s.settled();
    const l = await call(s, 'GET', '/api/v1/knowledge-base/conflicts', { key: w.a.key, query: { website_id: r.id } });
    expect(l.body.conflicts).toEqual([]);
    expect(await charges(r.ids[0])).toEqual([]);
    expect(provider.hits.length - before).toBe(1);
  }, 60_000);
});
