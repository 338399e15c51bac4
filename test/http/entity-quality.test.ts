import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { conflictId, conflictStream } from '../../commands/entity-quality/conflicts';
import { handle } from '../../commands/handle';
import { decideCreateFact, decideRecordCandidates, decideReviewFact } from '../../commands/knowledge/facts';
import { Knowledge, knowledgeStream } from '../../commands/knowledge/knowledge';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { factJudgeFollower, judgeUnits } from '../../src/workers/entity-quality';
import { positionFromString, type TypedEvent } from '../../src/eventstore/port';
import { MODEL_IDS } from '../../src/domain/models';
import { buildSite, everyListedAnswer, finishedRun, importAnswers, type Site } from '../support/answers';
import { simulatedEnginesWith } from '../support/engines';
import { getOk, refusedWithoutWrite } from '../support/http';
import { call, startServer, type TestServer, sharedServer } from '../support/server';
import { tenancyChecks, UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';
import { until } from '../support/until';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const SUGGESTIONS = '/api/v1/competitors/suggestions';
const CONFLICTS = '/api/v1/knowledge-base/conflicts';

/** The activity feed's entries of one kind of change to a website: the entities each names. */
const feedEntries = (t: TestServer, website_id: string, entity_type: string, change_type: string): Promise<{ entity_ids: string[] }[]> =>
  t.rt.database.db('rm_activity').where({ website_id, entity_type, change_type }).select('entity_ids');

/** Answers of the site's first prompt, one a day from 2026-11-01 (each an import item). */
const answers = (site: Site, texts: readonly (string | { text: string; citations: string[] })[], firstDay = 1) =>
  texts.map((t, i) => ({
    prompt_id: site.prompts[0].id,
    model: MODEL_IDS[i % 3],
    run_at: `2026-11-${String(firstDay + i).padStart(2, '0')}T10:00:00Z`,
    ...(typeof t === 'string' ? { text: t } : t),
  }));

interface Suggestion {
  name: string;
  answers: number;
  first_seen: string;
  last_seen: string;
  example_response_ids: string[];
  domains: string[];
}
const suggestions = async (websiteId: string, query: Record<string, string | number> = {}): Promise<Suggestion[]> =>
  (await getOk(s, w.a.key, SUGGESTIONS, { website_id: websiteId, ...query })).suggestions;
/** The suggestions once the read model shows `names` (in that order). */
const suggested = (websiteId: string, names: string[], query: Record<string, string | number> = {}) =>
  until(`suggestions ${names.join(', ')}`, async () => {
    const list = await suggestions(websiteId, query);
    return JSON.stringify(list.map((x) => x.name)) === JSON.stringify(names) && list;
  });

describe('competitor suggestions', () => {
  const fixture = async () => {
    const site = await buildSite(s, w.a.key, {
      name: 'Acme',
      competitors: [{ name: 'Bravo', url: 'https://bravo.example.com', identifiers: ['BravoCo'] }],
    });
    const imported = await importAnswers(
      s,
      w.a.key,
      site.id,
      answers(site, [
        { text: 'Top picks:\n1. **Zeta** - fast\n2. Gamma: cheap\n3. Acme\n**zeta** again, and **Bravo**.', citations: ['https://www.zeta.io/a'] },
        { text: '- Zeta (new)\n- BravoCo, fine\n- lower case item', citations: ['https://ze-ta.com/x', 'https://zeta-app.com/y'] },
        'Consider **Zeta**, **Gamma** and **Delta Labs**.',
        '* Omega, later',
      ]),
    );
    return { site, ids: imported.response_ids as string[] };
  };

  it('given answers naming the brand, a competitor (by name and identifier) and others, then only the others, counted once per answer, most answers first', async () => {
    const { site, ids } = await fixture();
    const list = await suggested(site.id, ['Zeta', 'Gamma'], { min_answers: 2 });
    expect(list[0]).toEqual({
      name: 'Zeta',
      answers: 3,
      first_seen: '2026-11-01T10:00:00.000Z',
      last_seen: '2026-11-03T10:00:00.000Z',
      example_response_ids: [ids[2], ids[1], ids[0]],
      domains: ['ze-ta.com', 'zeta.io'],
    });
    expect(list[1]).toMatchObject({ name: 'Gamma', answers: 2, domains: [] });
    // the default min_answers is 3; a range counts only its days
    expect((await suggestions(site.id)).map((x) => x.name)).toEqual(['Zeta']);
    expect(await suggestions(site.id, { min_answers: 1, start_date: '2026-11-03', end_date: '2026-11-04' })).toMatchObject([
      { name: 'Delta Labs', answers: 1 },
      { name: 'Gamma', answers: 1 },
      { name: 'Omega', answers: 1 },
      { name: 'Zeta', answers: 1, example_response_ids: [ids[2]] },
    ]);
  });

  it('given a suggestion, when it is accepted, then it is a competitor and no longer suggested; accepting a tracked name again is 409 naming it', async () => {
    const { site } = await fixture();
    await suggested(site.id, ['Zeta']);
    const r = await call(s, 'POST', `${SUGGESTIONS}/accept`, { key: w.a.key, body: { website_id: site.id, name: 'Zeta', url: 'https://zeta.io' } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.competitor).toMatchObject({ name: 'Zeta', url: 'https://zeta.io' });
    const listed = await call(s, 'GET', '/api/v1/competitors', { key: w.a.key, query: { website_id: site.id } });
    expect(listed.body.competitors.map((c: { name: string }) => c.name)).toEqual(['Bravo', 'Zeta']);
    await suggested(site.id, []);
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: `${SUGGESTIONS}/accept`,
        body: { website_id: site.id, name: 'zeta', url: 'https://zeta2.io' },
        status: 409,
        error: 'Competitor already tracked: Zeta',
      },
      {
        method: 'POST',
        path: `${SUGGESTIONS}/accept`,
        body: { website_id: site.id, name: 'BRAVOCO', url: 'https://b2.io' },
        status: 409,
        error: 'Competitor already tracked: Bravo',
      },
      {
        method: 'POST',
        path: `${SUGGESTIONS}/accept`,
        body: { website_id: site.id, name: 'acme', url: 'https://acme2.io' },
        status: 409,
        error: 'Competitor already tracked: Acme',
      },
    ]);
    // removing the competitor suggests the name again (what is excluded follows the catalogue)
    const id = r.body.competitor.id;
    expect((await call(s, 'DELETE', `/api/v1/competitors/${id}`, { key: w.a.key, query: { website_id: site.id } })).status).toBe(200);
    await suggested(site.id, ['Zeta']);
  });

  it('given a suggestion, when it is dismissed, then it is never suggested again, even with new answers; dismissing twice answers the same', async () => {
    const { site } = await fixture();
    await suggested(site.id, ['Zeta', 'Gamma'], { min_answers: 2 });
    for (let i = 0; i < 2; i++) {
      const r = await call(s, 'POST', `${SUGGESTIONS}/dismiss`, { key: w.a.key, body: { website_id: site.id, name: 'ZETA' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toEqual({ name: 'ZETA', dismissed: true });
    }
    expect((await suggestions(site.id, { min_answers: 2 })).map((x) => x.name)).toEqual(['Gamma']);
    await importAnswers(s, w.a.key, site.id, answers(site, ['**Zeta** is back.', '**Gamma** too.'], 10));
    await suggested(site.id, ['Gamma'], { min_answers: 3 });
    expect((await suggestions(site.id, { min_answers: 1 })).map((x) => x.name)).not.toContain('Zeta');
  });

  it('given a name reaching 3 answers, then one activity entry announces it (not again with more answers)', async () => {
    const { site } = await fixture();
    const entries = () => feedEntries(s, site.id, 'competitor_suggestion', 'created');
    await until('the announcement', async () => (await entries()).length === 1);
    await importAnswers(s, w.a.key, site.id, answers(site, ['**Zeta** once more.', '**Zeta** and **Gamma**.'], 12));
    await until('Gamma announced', async () => (await entries()).length === 2);
    await new Promise((r) => setTimeout(r, 300));
    expect(await entries()).toHaveLength(2);
  });

  it('given bad input, then 400 naming the field and nothing written', async () => {
    const site = await buildSite(s, w.a.key);
    const accept = (body: Record<string, unknown>) => ({
      method: 'POST',
      path: `${SUGGESTIONS}/accept`,
      body: { website_id: site.id, name: 'Zeta', url: 'https://zeta.io', ...body },
      status: 400,
    });
    await refusedWithoutWrite(s, w.a.key, [
      { ...accept({ name: '' }), error: /^name: / },
      { ...accept({ name: 'x'.repeat(201) }), error: /^name: / },
      { ...accept({ url: 'http://127.0.0.1/x' }), error: 'url: must be a public http(s) URL or domain' },
      { ...accept({ url: 'http://10.1.2.3' }), error: 'url: must be a public http(s) URL or domain' },
      { ...accept({ url: 'http://localhost:8080' }), error: 'url: must be a public http(s) URL or domain' },
      { ...accept({ url: 'https://intranet.internal' }), error: 'url: must be a public http(s) URL or domain' },
      { ...accept({ url: 'not a url' }), error: /^url: / },
      { method: 'POST', path: `${SUGGESTIONS}/dismiss`, body: { website_id: site.id, name: '   ' }, status: 400, error: /^name: / },
      { method: 'POST', path: `${SUGGESTIONS}/dismiss`, body: { website_id: site.id, name: 'y'.repeat(201) }, status: 400, error: /^name: / },
      { method: 'GET', path: SUGGESTIONS, query: { website_id: site.id, min_answers: '0' }, status: 400, error: /^min_answers: / },
      {
        method: 'GET',
        path: SUGGESTIONS,
        query: { website_id: site.id, start_date: '2026-11-05', end_date: '2026-11-01' },
        status: 400,
        error: /^end_date: /,
      },
      { method: 'GET', path: CONFLICTS, query: { website_id: site.id, status: 'closed' }, status: 400, error: /^status: / },
    ]);
  });
});

websiteTenancyChecks(() => w, 'GET', SUGGESTIONS);
websiteTenancyChecks(() => w, 'POST', `${SUGGESTIONS}/accept`, { name: 'Zeta', url: 'https://zeta.io' });
websiteTenancyChecks(() => w, 'POST', `${SUGGESTIONS}/dismiss`, { name: 'Zeta' });
websiteTenancyChecks(() => w, 'GET', CONFLICTS);

describe('fact conflicts', () => {
  const PRICE = 'Acme Pro costs 49 dollars per month.';
  const fixture = async () => {
    const site = await buildSite(s, w.a.key, { name: 'Acme' });
    const fact = async (text: string) => {
      const r = await call(s, 'POST', '/api/v1/knowledge-base/facts', { key: w.a.key, body: { website_id: site.id, text } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.fact.id as string;
    };
    const price = await fact(PRICE);
    const founded = await fact('Acme was founded in 2012 in Berlin.');
    const imported = await importAnswers(
      s,
      w.a.key,
      site.id,
      answers(site, [
        'Acme is popular. Acme Pro costs 99 dollars per month, billed yearly. Acme was founded in 2012 in Berlin.',
        'Zeta Pro costs 99 dollars per month.',
        'Acme Pro costs 49 dollars per month.',
      ]),
    );
    return { site, price, founded, ids: imported.response_ids as string[] };
  };
  const list = async (websiteId: string, status?: string, key = w.a.key) => {
    const r = await call(s, 'GET', CONFLICTS, { key, query: { website_id: websiteId, ...(status ? { status } : {}) } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.conflicts as { id: string; status: string; fact_id: string }[];
  };
  const detected = (websiteId: string) => until('the conflict', async () => ((await list(websiteId)).length ? list(websiteId) : false));

  it('given an approved fact and an answer contradicting it about the brand, then one open conflict with the sentence and the fact, and an activity entry', async () => {
    const { site, price, ids } = await fixture();
    const [c] = await detected(site.id);
    // the judge is a follower of the log, reported to the operator beside the read models
    const ready = await call(s, 'GET', '/readyz');
    expect(ready.body.projections).toContainEqual(expect.objectContaining({ name: 'fact-judge', status: 'running', leader: true }));
    expect(await list(site.id)).toEqual([
      {
        id: c.id,
        response_id: ids[0],
        fact_id: price,
        fact_text: PRICE,
        answer_excerpt: 'Acme Pro costs 99 dollars per month, billed yearly.',
        model: MODEL_IDS[0],
        detected_at: expect.any(String),
        status: 'open',
      },
    ]);
    const entry = await until('its entry', async () => (await feedEntries(s, site.id, 'fact_conflict', 'detected'))[0]);
    expect(entry.entity_ids).toEqual([c.id, price]);
  });

  it('given an open conflict, when it is resolved, then it is listed as resolved; resolving again answers the same; dismissing it then is 409', async () => {
    const { site } = await fixture();
    const [c] = await detected(site.id);
    for (let i = 0; i < 2; i++) {
      const r = await call(s, 'POST', `${CONFLICTS}/${c.id}/resolve`, { key: w.a.key });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.conflict).toMatchObject({ id: c.id, status: 'resolved' });
    }
    expect(await list(site.id)).toEqual([]);
    expect((await list(site.id, 'resolved')).map((x) => x.id)).toEqual([c.id]);
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: `${CONFLICTS}/${c.id}/dismiss`, status: 409, error: 'Conflict is already resolved' },
    ]);
  });

  it('given an open conflict, when it is dismissed, then it is listed as dismissed', async () => {
    const { site } = await fixture();
    const [c] = await detected(site.id);
    const r = await call(s, 'POST', `${CONFLICTS}/${c.id}/dismiss`, { key: w.a.key });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect((await list(site.id, 'dismissed')).map((x) => x.id)).toEqual([c.id]);
  });

  it('given an open conflict, when its fact is edited or rejected, then the conflict is closed (resolved)', async () => {
    for (const change of ['edit', 'reject'] as const) {
      const { site, price } = await fixture();
      const [c] = await detected(site.id);
      const r =
        change === 'edit'
          ? await call(s, 'PATCH', `/api/v1/knowledge-base/facts/${price}`, { key: w.a.key, body: { text: 'Acme Pro costs 99 dollars per month.' } })
          : await call(s, 'POST', `/api/v1/knowledge-base/facts/${price}/review`, { key: w.a.key, body: { decision: 'reject' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      await until(`closed by ${change}`, async () => (await list(site.id, 'resolved')).map((x) => x.id).join() === c.id);
      expect(await list(site.id)).toEqual([]);
      // closed in the log too: a dismiss is 409 as for any resolved conflict, and a resolve answers it unchanged
      await until(`closed in the log by ${change}`, async () =>
        (await s.rt.store.readStream(conflictStream(c.id))).some((e) => e.type === 'FactConflictResolved'),
      );
      await refusedWithoutWrite(s, w.a.key, [
        { method: 'POST', path: `${CONFLICTS}/${c.id}/dismiss`, status: 409, error: 'Conflict is already resolved' },
      ]);
      const again = await call(s, 'POST', `${CONFLICTS}/${c.id}/resolve`, { key: w.a.key });
      expect(again.status).toBe(200);
      expect(again.body.conflict).toMatchObject({ id: c.id, status: 'resolved' });
      expect((await s.rt.store.readStream(conflictStream(c.id))).map((e) => e.type)).toEqual(['FactConflictDetected', 'FactConflictResolved']);
    }
  });

  it('given an answer delivered twice in one batch and again later, then one conflict per answer and fact; a fact added a moment after a judgement is judged against by the next', async () => {
    const { site, price } = await fixture();
    await detected(site.id);
    const deps = { store: s.rt.store, db: s.rt.database.db, logger: s.rt.logger };
    const { organization_id } = await s.rt.database.db('rm_websites').where({ id: site.id }).first('organization_id');
    const twice = answerUnit(site, organization_id, 'Acme Pro costs 79 dollars per month.');
    expect(await judgeUnits(deps, [twice, twice])).toBe(1);
    expect(await judgeUnits(deps, [twice])).toBe(1);
    const stored = await s.rt.store.readStream(conflictStream(conflictId(twice.answer.response_id, price)));
    expect(stored.map((e) => e.type)).toEqual(['FactConflictDetected']);

    const founded = await handle(
      { store: s.rt.store, organizationId: organization_id, actor: SYSTEM_ACTOR, websiteId: site.id },
      knowledgeStream(site.id),
      Knowledge,
      (st) => decideCreateFact(st, { website_id: site.id, text: 'Acme has 40 offices in Europe.', confidence: 'high', fact_id: newId() }),
    );
    if (isDomainError(founded)) throw new Error(founded.message);
    const later = answerUnit(site, organization_id, 'Acme has 45 offices in Europe.');
    expect(await judgeUnits(deps, [later])).toBe(1);
    // the conflicts' read model may lag the appends under load: wait for the second row, then check there are no more
    const rowsOf = () =>
      s.rt.database.db('rm_fact_conflicts').whereIn('response_id', [twice.answer.response_id, later.answer.response_id]).select('fact_id');
    await until('both conflicts in the read model', async () => (await rowsOf()).length >= 2);
    await s.settled();
    expect((await rowsOf()).map((r) => r.fact_id).sort()).toEqual([price, founded.result.fact_id].sort());
  });

  /** One engine answer of the site as the log holds it. */
  const answerEvent = (site: { id: string }, organization_id: string, text: string) => {
    const response_id = newId();
    const data = { response_id, website_id: site.id, model: MODEL_IDS[1], run_at: '2026-11-20T10:00:00Z', text, source: 'engine' };
    const metadata = {
      organization_id,
      website_id: site.id,
      actor: SYSTEM_ACTOR,
      correlation_id: newId(),
      causation_id: null,
      time: new Date().toISOString(),
    };
    const position = positionFromString('0:0');
    return {
      id: newId(),
      type: 'ResponseRecorded',
      streamId: `response-${response_id}`,
      revision: 0n,
      data,
      metadata,
      position,
    } as unknown as TypedEvent;
  };
  /** One engine answer of the site as a unit of the judge. */
  const answerUnit = (site: { id: string }, organization_id: string, text: string) => {
    const e = answerEvent(site, organization_id, text);
    return { msg: { id: e.id, data: e.data, metadata: e.metadata, position: '0:0' }, answer: e.data } as unknown as Parameters<
      typeof judgeUnits
    >[1][number];
  };
  /** A candidate fact, pending review, recorded on the knowledge stream as research records it; its id. */
  const pendingFact = async (websiteId: string, organization_id: string, text: string): Promise<string> => {
    const fact_id = newId();
    const candidate = { fact_id, pillar_id: newId(), text, source_url: null, source_quote: null };
    const recorded = await handle(
      { store: s.rt.store, organizationId: organization_id, actor: SYSTEM_ACTOR, websiteId },
      knowledgeStream(websiteId),
      Knowledge,
      (st) =>
        decideRecordCandidates(st, websiteId, [
          { ...candidate, confidence: 'high', source_type: 'web_research', response_id: null, job_id: newId() },
        ]),
    );
    if (isDomainError(recorded)) throw new Error(recorded.message);
    return fact_id;
  };
  /** A fact approved on its stream (the review route finds it in the read model, which may lag). */
  const approve = async (websiteId: string, organization_id: string, factId: string) => {
    const r = await handle(
      { store: s.rt.store, organizationId: organization_id, actor: SYSTEM_ACTOR, websiteId },
      knowledgeStream(websiteId),
      Knowledge,
      (st) => decideReviewFact(st, factId, { decision: 'approve' }),
    );
    if (isDomainError(r)) throw new Error(r.message);
  };
  const organizationOf = async (websiteId: string): Promise<string> =>
    (await s.rt.database.db('rm_websites').where({ id: websiteId }).first('organization_id')).organization_id;

  it('given a fact pending review, then no judgement is against it; once approved, the next is; once deleted, none again', async () => {
    const { site } = await fixture();
    await detected(site.id);
    const organization_id = await organizationOf(site.id);
    const deps = { store: s.rt.store, db: s.rt.database.db, logger: s.rt.logger };
    const offices = await pendingFact(site.id, organization_id, 'Acme has 40 offices in Europe.');
    expect(await judgeUnits(deps, [answerUnit(site, organization_id, 'Acme has 45 offices in Europe.')])).toBe(0);

    await approve(site.id, organization_id, offices);
    const after = answerUnit(site, organization_id, 'Acme has 46 offices in Europe.');
    expect(await judgeUnits(deps, [after])).toBe(1);
    expect((await s.rt.store.readStream(conflictStream(conflictId(after.answer.response_id, offices)))).map((e) => e.type)).toEqual([
      'FactConflictDetected',
    ]);

    const deleted = await call(s, 'POST', '/api/v1/knowledge-base/facts/delete', {
      key: w.a.key,
      body: { website_id: site.id, fact_ids: [offices] },
    });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    const erased = answerUnit(site, organization_id, 'Acme has 47 offices in Europe.');
    expect(await judgeUnits(deps, [erased])).toBe(0);
    expect(await s.rt.store.readStream(conflictStream(conflictId(erased.answer.response_id, offices)))).toEqual([]);
  });

  it('given judgements at once, when a fact is approved while one of them reads the facts, then a judgement begun after the approval is against it', async () => {
    const { site } = await fixture();
    await detected(site.id);
    const organization_id = await organizationOf(site.id);
    const offices = await pendingFact(site.id, organization_id, 'Acme has 40 offices in Europe.');
    // a store whose reads of the knowledge stream are held once read, until released
    let reads = 0;
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const store: typeof s.rt.store = {
      ...s.rt.store,
      readStream: async (streamId, options) => {
        const events = await s.rt.store.readStream(streamId, options);
        if (streamId === knowledgeStream(site.id)) {
          reads++;
          await held;
        }
        return events;
      },
    };
    const deps = { store, db: s.rt.database.db, logger: s.rt.logger };
    const before = judgeUnits(deps, [answerUnit(site, organization_id, 'Acme has 45 offices in Europe.')]);
    await until('the first read of the facts', async () => reads === 1);
    await approve(site.id, organization_id, offices);
    const later = [46, 47, 48].map((n) => judgeUnits(deps, [answerUnit(site, organization_id, `Acme has ${n} offices in Europe.`)]));
    release();
    expect(await before).toBe(0);
    expect(await Promise.all(later)).toEqual([1, 1, 1]);
    // the three begun during the first read shared the next one
    expect(reads).toBe(2);
  });

  it('given answers of one batch of the log, then their conflicts are appended together; when that append fails, the batch fails and, followed again, records each conflict once', async () => {
    const { site, price } = await fixture();
    await detected(site.id);
    const organization_id = await organizationOf(site.id);
    let conflictAppends = 0;
    let refuse = true;
    const store: typeof s.rt.store = {
      ...s.rt.store,
      appendMany: async (appends) => {
        if (appends.some((a) => a.streamId.startsWith('fact-conflict-'))) {
          conflictAppends++;
          if (refuse) {
            refuse = false;
            throw new Error('the store refused this append');
          }
        }
        return s.rt.store.appendMany!(appends);
      },
    };
    const follower = factJudgeFollower({ store, db: s.rt.database.db, logger: s.rt.logger });
    const batch = [61, 62, 63].map((n) => answerEvent(site, organization_id, `Acme Pro costs ${n} dollars per month.`));
    const streams = batch.map((e) => conflictStream(conflictId((e.data as { response_id: string }).response_id, price)));
    await expect(follower.follow!(batch)).rejects.toThrow('the store refused this append');
    for (const stream of streams) expect(await s.rt.store.readStream(stream)).toEqual([]);
    await follower.follow!(batch);
    await follower.follow!(batch);
    expect(conflictAppends).toBe(3);
    for (const stream of streams) expect((await s.rt.store.readStream(stream)).map((e) => e.type)).toEqual(['FactConflictDetected']);
  });

  it('given a conflict, when its fact is deleted, then it is gone from every status and the log keeps none of its text', async () => {
    const { site, price } = await fixture();
    const [c] = await detected(site.id);
    const r = await call(s, 'POST', '/api/v1/knowledge-base/facts/delete', { key: w.a.key, body: { website_id: site.id, fact_ids: [price] } });
    expect(r.status).toBe(200);
    await until('gone', async () => (await list(site.id)).length === 0);
    for (const status of ['resolved', 'dismissed']) expect(await list(site.id, status)).toEqual([]);
    const [stored] = await s.rt.store.readStream(conflictStream(c.id));
    expect(stored.data).toMatchObject({ conflict_id: c.id, fact_text: null, answer_excerpt: null });
    await refusedWithoutWrite(s, w.a.key, [{ method: 'POST', path: `${CONFLICTS}/${c.id}/resolve`, status: 404, error: 'Conflict not found' }]);
  });

  it("given another organization's conflict, an unknown id or a key scoped to another website, then 404 or 403 and nothing written", async () => {
    const { site } = await fixture();
    const [c] = await detected(site.id);
    await refusedWithoutWrite(s, w.b.key, [
      { method: 'POST', path: `${CONFLICTS}/${c.id}/resolve`, status: 404, error: 'Conflict not found' },
      { method: 'POST', path: `${CONFLICTS}/${UNKNOWN_ID}/dismiss`, status: 404, error: 'Conflict not found' },
    ]);
    await refusedWithoutWrite(s, w.a.scoped, [
      { method: 'POST', path: `${CONFLICTS}/${c.id}/resolve`, status: 403, error: 'Unauthorized access to this website' },
    ]);
    await refusedWithoutWrite(s, w.a.key, [{ method: 'POST', path: `${CONFLICTS}/not-a-uuid/resolve`, status: 400, error: /^id: / }]);
  });
});

tenancyChecks(`POST ${CONFLICTS}/{id}/resolve`, () => w, {
  method: 'POST',
  request: () => ({ path: `${CONFLICTS}/${UNKNOWN_ID}/resolve` }),
});

describe("a run's engine answers", () => {
  // every answer names an untracked brand and contradicts the price fact
  const engines = simulatedEnginesWith(async (_model, _req, simulated) => ({
    ...(await simulated()),
    text: '**Zeta** is worth a look. Acme Pro costs 99 dollars per month.',
  }));
  let e: TestServer;
  let key: string;
  beforeAll(async () => {
    e = await startServer({}, {}, undefined, { engines });
    key = (await e.org('Engine answers')).key;
  });
  afterAll(async () => e?.close());

  it('given an approved fact, when a run answers against it naming an untracked brand, then every answer has its conflict and the name is announced once', async () => {
    const site = await buildSite(e, key, { name: 'Acme' });
    const fact = await call(e, 'POST', '/api/v1/knowledge-base/facts', {
      key,
      body: { website_id: site.id, text: 'Acme Pro costs 49 dollars per month.' },
    });
    expect(fact.status, JSON.stringify(fact.body)).toBe(201);
    const start = await call(e, 'POST', '/api/v1/response-streaming/start', { key, body: { website_id: site.id } });
    expect(start.status).toBe(202);
    const run = await finishedRun(e, key, site.id, start.body.run_id);
    const listed = await everyListedAnswer<{ id: string }>(e, key, site.id);
    expect(listed.length).toBe(run.recorded);
    expect(listed.length).toBeGreaterThan(2);
    const conflicts: { response_id: string; fact_id: string }[] = await until('a conflict per answer', async () => {
      const r = await call(e, 'GET', CONFLICTS, { key, query: { website_id: site.id } });
      return r.body.conflicts.length === listed.length && r.body.conflicts;
    });
    expect(new Set(conflicts.map((c) => c.response_id))).toEqual(new Set(listed.map((a) => a.id)));
    expect(new Set(conflicts.map((c) => c.fact_id))).toEqual(new Set([fact.body.fact.id]));
    const announced = () => feedEntries(e, site.id, 'competitor_suggestion', 'created');
    await until('Zeta announced', async () => (await announced()).length === 1);
    const r = await call(e, 'GET', SUGGESTIONS, { key, query: { website_id: site.id } });
    expect(r.body.suggestions.map((x: { name: string; answers: number }) => [x.name, x.answers])).toEqual([['Zeta', listed.length]]);
  });
});
