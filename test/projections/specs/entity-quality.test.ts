import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { competitorSuggestionsProjection } from '../../../projections/competitor-suggestions';
import { factConflictsProjection } from '../../../projections/fact-conflicts';
import { suggestionIndexOf } from '../../../queries/entity-quality/suggestion-index';
import { listSuggestions } from '../../../queries/entity-quality/suggestions';
import { citedHosts, hostsNaming, namesPutForward } from '../../../src/analysis/entity-quality';
import type { TypedEvent } from '../../../src/eventstore/port';
import { anAnswer, testMetadata } from '../../support/events';
import { event, projectionSpec, T0, T1 } from '../../support/projection-spec';

interface Made {
  id: string;
  run_at: string;
  text: string;
  cites: string[];
}

/** What the answers in the range give one by one. */
const expectedOf = (made: readonly Made[], from: string, to: string) => {
  const byKey = new Map<string, { name: string; answers: number; first: string; last: string; days: Map<string, string[]>; domains: Set<string> }>();
  for (const a of made) {
    const day = a.run_at.slice(0, 10);
    if (day < from || day > to) continue;
    for (const n of namesPutForward(a.text)) {
      let k = byKey.get(n.key);
      if (!k) byKey.set(n.key, (k = { name: n.name, answers: 0, first: a.run_at, last: a.run_at, days: new Map(), domains: new Set() }));
      k.answers++;
      if (a.run_at < k.first) [k.first, k.name] = [a.run_at, n.name];
      if (a.run_at > k.last) k.last = a.run_at;
      const ex = k.days.get(day) ?? [];
      if (ex.length < 3) ex.push(a.id);
      k.days.set(day, ex);
      for (const h of hostsNaming(n.name, citedHosts(a.cites, a.text))) k.domains.add(h);
    }
  }
  return [...byKey.entries()]
    .sort(([ka, a], [kb, b]) => b.answers - a.answers || (ka < kb ? -1 : 1))
    .map(([, k]) => ({
      name: k.name,
      answers: k.answers,
      first_seen: k.first,
      last_seen: k.last,
      example_response_ids: [...k.days.entries()]
        .sort(([a], [b]) => (a < b ? 1 : -1))
        .flatMap(([, ids]) => ids)
        .slice(0, 3),
      domains: [...k.domains].sort(),
    }));
};

describe('competitor suggestions read model: names per website, name and day', () => {
  const { site, given, db } = projectionSpec(competitorSuggestionsProjection);
  const answer = (text: string, run_at: string, citations: string[] = [], response_id: string = randomUUID()) =>
    event(
      'ResponseRecorded',
      anAnswer({ response_id, website_id: site, prompt_id: randomUUID() }, text, { model: 'gpt-4o', run_at, citations, source: 'import' }),
    );
  const a1 = randomUUID();
  const a2 = randomUUID();

  it('given nothing, when answers of one day name Zeta twice in one answer and once in another, then one day row of 2 answers with both as examples and its domain', async () => {
    await given()
      .when(answer('**Zeta** and **zeta**', T0, ['https://www.zeta.io/x'], a1), answer('1. Zeta - ok', '2026-03-01T05:00:00.000Z', [], a2))
      .then({
        rm_suggestion_days: [{ key: 'zeta', day: '2026-03-01', name: 'Zeta', answers: 2, first_seen: T0, examples: [a1, a2], domains: ['zeta.io'] }],
      });
  });

  it('given a day row, when a later batch adds an answer of the same day, then it is counted into that row; another day has its own row', async () => {
    await given(answer('**Zeta**', T0, [], a1))
      .when(answer('**Zeta**', '2026-03-01T09:00:00.000Z', ['https://zeta.io'], a2), answer('**Zeta**', T1))
      .then({
        rm_suggestion_days: {
          columns: ['answers', 'last_seen', 'domains'],
          orderBy: 'day',
          rows: [
            { answers: 2, last_seen: '2026-03-01T09:00:00.000Z', domains: ['zeta.io'] },
            { answers: 1, last_seen: T1, domains: [] },
          ],
        },
      });
  });

  it('given answers over 200 days in two batches out of order, when any range is listed, then it is what the answers in it give one by one (the day rows held in memory)', async () => {
    const NAMES = ['Zeta', 'zeta', 'Gamma Labs', 'Delta', 'Omega', 'Kappa One', 'Sigma', 'Tau'];
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const DAY = 86_400_000;
    const first = Date.parse('2026-01-01T00:00:00Z');
    const made = Array.from({ length: 300 }, (_, i) => {
      const named = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => NAMES[Math.floor(rand() * NAMES.length)]);
      const run_at = new Date(first + Math.floor(rand() * 200) * DAY + i * 1000).toISOString();
      const cites = rand() < 0.5 ? [`https://www.${named[0].toLowerCase().replace(/ /g, '')}.com/x`, 'https://other.example.org/'] : [];
      return { id: randomUUID(), run_at, text: named.map((n) => `**${n}**`).join(' and '), cites };
    });
    const split = 120;
    await given(...made.slice(0, split).map((a) => answer(a.text, a.run_at, a.cites, a.id)))
      .when(...made.slice(split).map((a) => answer(a.text, a.run_at, a.cites, a.id)))
      .then({});
    const expected = (from: string, to: string) => expectedOf(made, from, to);
    const day = (n: number) => new Date(first + n * DAY).toISOString().slice(0, 10);
    const ranges: [string, string][] = [
      [day(0), day(199)],
      [day(3), day(92)],
      [day(64), day(127)],
      [day(10), day(10)],
      ['1900-01-01', '9999-12-31'],
    ];
    for (let i = 0; i < 25; i++) {
      const a = Math.floor(rand() * 200);
      ranges.push([day(a), day(Math.min(199, a + Math.floor(rand() * 120)))]);
    }
    for (const [from, to] of ranges) {
      const got = await listSuggestions(db(), site, { from, to, min_answers: 1 });
      expect(got.suggestions, `${from}..${to}`).toEqual(expected(from, to));
    }
    expect((await listSuggestions(db(), site, { min_answers: 1 })).suggestions).toEqual(expected(day(0), day(199)));
  });

  it('given a website listed once, when later answers come on some days, then only those days are read again and the list is what all answers give; when the rows are built again with fewer days, the others are gone', async () => {
    const DAY = 86_400_000;
    const first = Date.parse('2026-05-01T00:00:00Z');
    const day = (n: number) => new Date(first + n * DAY).toISOString().slice(0, 10);
    const NAMES = ['Zeta', 'Gamma Labs', 'Delta', 'Omega'];
    const make = (n: number, i: number): Made => ({
      id: randomUUID(),
      run_at: new Date(first + n * DAY + i * 1000).toISOString(),
      text: `**${NAMES[i % 4]}** and **${NAMES[(i * 7 + n) % 4]}**`,
      cites: i % 3 ? [`https://www.${NAMES[i % 4].toLowerCase().replace(/ /g, '')}.com/`] : [],
    });
    const made = Array.from({ length: 120 }, (_, i) => make(i % 30, i));
    const asEvent = (a: Made) => answer(a.text, a.run_at, a.cites, a.id);
    const all = () => listSuggestions(db(), site, { min_answers: 1 });
    await given(...made.map(asEvent))
      .when()
      .then({});
    expect((await all()).suggestions).toEqual(expectedOf(made, day(0), day(99)));
    const before = (await suggestionIndexOf(db(), site))?.index;
    // the runner's next batch: days 3 and 17 again, day 40 new
    const more = [make(3, 500), make(17, 501), make(40, 502), make(3, 503)];
    await db().transaction((trx) =>
      competitorSuggestionsProjection.apply(
        trx,
        more.map(
          (a, i) =>
            ({
              id: randomUUID(),
              type: 'ResponseRecorded',
              data: asEvent(a).data,
              metadata: testMetadata({ time: T0, website_id: site }),
              streamId: `response-${a.id}`,
              revision: 0n,
              position: [BigInt(10_000 + i), 0n],
              recordedAt: new Date(),
            }) as TypedEvent,
        ),
        { rebuilding: false },
      ),
    );
    expect((await all()).suggestions).toEqual(expectedOf([...made, ...more], day(0), day(99)));
    expect((await listSuggestions(db(), site, { from: day(3), to: day(3), min_answers: 1 })).suggestions).toEqual(
      expectedOf([...made, ...more], day(3), day(3)),
    );
    const after = (await suggestionIndexOf(db(), site))?.index;
    if (!before || !after) throw new Error('no index held');
    expect(after.version).not.toBe(before.version);
    expect([...after.days].map((d) => new Date(d * DAY).toISOString().slice(0, 10))).toEqual([
      ...Array.from({ length: 30 }, (_, n) => day(n)),
      day(40),
    ]);
    before.days.forEach((d, i) => {
      const again = [3, 17].includes(d - first / DAY);
      const now = after.blocks[after.days.indexOf(d)];
      if (again) expect(now, day(d - first / DAY)).not.toBe(before.blocks[i]);
      else expect(now, day(d - first / DAY)).toBe(before.blocks[i]);
    });
    // built again from fewer answers (as a rebuild swaps tables in): the days without rows are no longer read
    const fewer = made.filter((a) => a.run_at < day(10));
    await given(...fewer.map(asEvent))
      .when()
      .then({});
    expect((await all()).suggestions).toEqual(expectedOf(fewer, day(0), day(99)));
    expect((await suggestionIndexOf(db(), site))?.index.days.length).toBe(10);
  });

  it('given the brand and a competitor, when the competitor is renamed and given identifiers, then its keys follow; when removed, its row goes', async () => {
    const c = randomUUID();
    const stream = `catalog-${site}`;
    const added = event(
      'CompetitorAdded',
      { competitor_id: c, name: 'Bravo', url: 'https://bravo.io', normalized_url: 'https://bravo.io', identifiers: [] },
      { stream },
    );
    await given(
      event('WebsiteCreated', { website_id: site, name: 'Acme', url: 'https://acme.io', normalized_url: 'https://acme.io', external_id: null }),
      added,
    )
      .when(
        event('CompetitorRenamed', { competitor_id: c, name: 'Bravo Labs' }, { stream }),
        event('CompetitorIdentifiersChanged', { competitor_id: c, identifiers: ['BRAVO'] }, { stream }),
      )
      .then({
        rm_suggestion_entities: {
          columns: ['entity_id', 'keys'],
          orderBy: 'name',
          rows: [
            { entity_id: site, keys: ['acme'] },
            { entity_id: c, keys: ['bravo labs', 'bravo'] },
          ],
        },
      });
    await given(added)
      .when(event('CompetitorRemoved', { competitor_id: c }, { stream }))
      .then({ rm_suggestion_entities: [] });
  });

  it('given a dismissal and an announcement, when either comes again, then one row each', async () => {
    const dismissed = event('CompetitorSuggestionDismissed', { website_id: site, name: 'Zeta', key: 'zeta' });
    const announced = event('CompetitorSuggested', { website_id: site, name: 'Gamma', key: 'gamma', answers: 3 });
    await given(dismissed, announced)
      .when(dismissed, announced)
      .then({ rm_suggestion_dismissed: [{ key: 'zeta', name: 'Zeta' }], rm_suggestion_announced: [{ key: 'gamma' }] });
  });
});

describe('fact conflicts read model', () => {
  const { site, given } = projectionSpec(factConflictsProjection);
  const fact = randomUUID();
  const id = randomUUID();
  const detected = (over: { fact_text?: string | null } = {}) =>
    event('FactConflictDetected', {
      conflict_id: id,
      website_id: site,
      response_id: randomUUID(),
      fact_id: fact,
      fact_text: 'Acme costs 49 dollars.',
      answer_excerpt: 'Acme costs 99 dollars.',
      model: 'gpt-4o',
      judge: 'simulated',
      ...over,
    });

  it('given nothing, when a conflict is detected, then it is open with both texts', async () => {
    await given()
      .when(detected())
      .then({
        rm_fact_conflicts: [
          { id, fact_id: fact, fact_text: 'Acme costs 49 dollars.', answer_excerpt: 'Acme costs 99 dollars.', status: 'open', detected_at: T0 },
        ],
      });
  });

  it('given a dismissed conflict, when its fact is rejected, then it stays dismissed; an open one of an archived fact is resolved', async () => {
    await given(detected(), event('FactConflictDismissed', { conflict_id: id }))
      .when(event('FactReviewed', { fact_id: fact, review_status: 'rejected' }))
      .then({ rm_fact_conflicts: [{ id, status: 'dismissed' }] });
    await given(detected())
      .when(event('FactArchived', { fact_id: fact, replaced_by: randomUUID() }, { meta: { time: T1 } }))
      .then({ rm_fact_conflicts: [{ id, status: 'resolved', updated_at: T1 }] });
  });

  it('given a conflict, when its fact is deleted, then its row goes; an erased one applied again (a rebuild) keeps nothing', async () => {
    await given(detected())
      .when(event('FactsDeleted', { fact_ids: [fact], replaced_ids: [] }))
      .then({ rm_fact_conflicts: [] });
    await given()
      .when(detected({ fact_text: null }))
      .then({ rm_fact_conflicts: [] });
  });
});
