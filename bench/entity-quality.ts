/**
 * `entity-quality`: (1) `competitor_suggestions_ms`, GET /competitors/suggestions's query over 90-day ranges of one
 * website's 1.2 M answers over 365 days (`--quick`: 120,000), the read model built by the projection's own apply from
 * ResponseRecorded events whose texts list and bold 3 to 6 names out of 2,000 (Zipf-like); (2)
 * `fact_judge_answers_per_s`, engine answers (ResponseRecorded in answer streams, 500 per append) judged by the
 * entity-quality area's follower of the log (the real workers, with a private nats-server) with the simulated judge
 * against 20 approved facts, each contradicting one of them: answers per second from the first append until every
 * conflict is in the read model.
 */
import { handle } from '../commands/handle';
import { Knowledge, knowledgeStream } from '../commands/knowledge/knowledge';
import { competitorSuggestionsProjection } from '../projections/competitor-suggestions';
import { listSuggestions } from '../queries/entity-quality/suggestions';
import { decideCreateFact } from '../commands/knowledge/facts';
import { SYSTEM_ACTOR } from '../src/domain/events';
import { isDomainError } from '../src/domain/errors';
import { MODEL_IDS } from '../src/domain/models';
import type { TypedEvent } from '../src/eventstore/port';
import { startNatsServer } from '../test/bus/nats-server';
import { anAnswer } from '../test/support/events';
import { rng, seededUuid, systemMetadata } from './generate';
import { type Bench, cpuMeter, info, nowNs, perUnit, quantile, report, secondsSince, sleep, withFreshDatabase } from './lib';
import { startBenchServer } from './server';

const DAY_MS = 86_400_000;
const FIRST = Date.parse('2025-01-01T00:00:00Z');
const DAYS = 365;
const SYL = ['ka', 'lo', 'mi', 'ren', 'tor', 'sa', 'vel', 'din', 'qua', 'pe', 'zor', 'bri', 'nal', 'fe', 'gus', 'hol'];

function names(r: () => number, n: number): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    let w = '';
    for (let i = 0, k = 2 + Math.floor(r() * 2); i < k; i++) w += SYL[Math.floor(r() * SYL.length)];
    out.add(w[0].toUpperCase() + w.slice(1) + (r() < 0.2 ? ' Labs' : ''));
  }
  return [...out];
}

/** An engine answer's ResponseRecorded data (the prompt: the website's id, unused here). */
const engineAnswer = (websiteId: string, responseId: string, made: number, run_at: string, text: string, citations: string[]) =>
  anAnswer({ response_id: responseId, website_id: websiteId, prompt_id: websiteId }, text, {
    model: MODEL_IDS[made % MODEL_IDS.length],
    run_at,
    citations,
  });

/** Fact i's two words of its own (letters only, four or more), so an answer about fact i shares two words with it alone. */
const factWords = (i: number) => [`tier${String.fromCharCode(97 + i)}x`, `seat${String.fromCharCode(97 + i)}s`];

async function suggestionsFigure(quick: boolean): Promise<void> {
  const total = quick ? 120_000 : 1_200_000;
  await withFreshDatabase({}, async (d) => {
    const p = competitorSuggestionsProjection;
    await p.migrate(d.db);
    const r = rng(41);
    const pool = names(r, 2000);
    const pick = () => pool[Math.floor(pool.length * r() ** 3)];
    const websiteId = seededUuid(r);
    const metadata = systemMetadata(seededUuid(r), websiteId, r);
    const build = await cpuMeter(d.db);
    const t0 = nowNs();
    let made = 0;
    while (made < total) {
      const batch: TypedEvent[] = [];
      for (; batch.length < 2000 && made < total; made++) {
        const listed = Array.from({ length: 3 + Math.floor(r() * 4) }, pick);
        const text = `Here are good options:\n${listed.map((n, i) => `${i + 1}. **${n}** - solid choice, ${Math.round(r() * 50)} dollars`).join('\n')}\nOverall it depends.`;
        const run_at = new Date(FIRST + Math.floor((made / total) * DAYS * DAY_MS)).toISOString();
        batch.push({
          id: seededUuid(r),
          type: 'ResponseRecorded',
          data: engineAnswer(websiteId, seededUuid(r), made, run_at, text, [
            `https://www.${listed[0].toLowerCase().replace(/ /g, '')}.com/`,
            'https://review.example.com/x',
          ]),
          metadata,
          streamId: `response-${made}`,
          revision: 0n,
          position: [BigInt(made), 0n],
          recordedAt: new Date(),
        } as TypedEvent);
      }
      await d.db.transaction((trx) => p.apply(trx, batch, { rebuilding: false }));
    }
    const built = secondsSince(t0);
    const buildCpu = await build.stop();
    await d.db.raw('vacuum (analyze) rm_suggestion_days');
    const rows = (await d.db('rm_suggestion_days').count<{ n: string }[]>('* as n'))[0].n;
    info(`suggestions: ${total} answers applied in ${built.toFixed(1)} s through the projection (2,000 per batch); ${rows} name-day rows`);
    report('competitor_suggestions_projection_answers_per_s', total / built, 'answers/s', {
      cpu: perUnit(buildCpu, total, 'answer'),
      note: 'the competitor suggestions projection alone, its apply in one transaction per 2,000 answers',
    });
    report('competitor_suggestions_projection_cpu_us_per_answer', (buildCpu.nodeUs + buildCpu.pgUs) / total, 'us', {
      note: `node ${(buildCpu.nodeUs / total).toFixed(1)} us + Postgres ${(buildCpu.pgUs / total).toFixed(1)} us`,
    });
    const range = () => {
      const start = FIRST + Math.floor(r() * (DAYS - 90)) * DAY_MS;
      return { from: new Date(start).toISOString().slice(0, 10), to: new Date(start + 89 * DAY_MS).toISOString().slice(0, 10) };
    };
    // the first read loads the website's day rows into memory
    const cold = await cpuMeter(d.db);
    let t = nowNs();
    await listSuggestions(d.db, websiteId, { ...range(), min_answers: 3 });
    const coldMs = secondsSince(t) * 1000;
    const coldCpu = await cold.stop();
    info(
      `suggestions: the first read (loads the ${rows} day rows) ${coldMs.toFixed(0)} ms, CPU node ${Math.round(coldCpu.nodeUs / 1000)} ms + Postgres ${Math.round(coldCpu.pgUs / 1000)} ms`,
    );
    for (let i = 0; i < 4; i++) await listSuggestions(d.db, websiteId, { ...range(), min_answers: 3 });
    const times: number[] = [];
    const cpu = await cpuMeter(d.db);
    let listed = 0;
    for (let i = 0; i < 35; i++) {
      const q = range();
      t = nowNs();
      const a = await listSuggestions(d.db, websiteId, { ...q, min_answers: 3 });
      times.push(secondsSince(t) * 1000);
      listed = a.suggestions.length;
    }
    const used = await cpu.stop();
    times.sort((x, y) => x - y);
    info(`suggestions: 35 timed reads (after 5 warm-up, the first loading) of random 90-day ranges, min_answers 3; the last listed ${listed} names`);
    report('competitor_suggestions_ms', quantile(times, 0.95), 'ms', {
      goal: { op: '<=', value: 50 },
      note: `p95; p50 ${quantile(times, 0.5).toFixed(1)} ms; CPU per read: node ${Math.round(used.nodeUs / 35 / 1000)} ms, Postgres ${Math.round(used.pgUs / 35 / 1000)} ms; ${total} answers`,
    });
    report('competitor_suggestions_cpu_us_per_read', (used.nodeUs + used.pgUs) / 35, 'us', {
      note: `node ${(used.nodeUs / 35).toFixed(0)} us + Postgres ${(used.pgUs / 35).toFixed(0)} us (the 35 timed reads)`,
    });
    // a live website: answers of the last day come in a batch, then the next read loads that day again
    const last = FIRST + (DAYS - 1) * DAY_MS;
    const more: TypedEvent[] = [];
    for (let i = 0; i < 2000; i++) {
      const listedNames = Array.from({ length: 3 + Math.floor(r() * 4) }, pick);
      more.push({
        id: seededUuid(r),
        type: 'ResponseRecorded',
        data: engineAnswer(websiteId, seededUuid(r), i, new Date(last + i * 1000).toISOString(), listedNames.map((n) => `**${n}**`).join(', '), []),
        metadata,
        streamId: `response-more-${i}`,
        revision: 0n,
        position: [BigInt(total + i), 0n],
        recordedAt: new Date(),
      } as TypedEvent);
    }
    await d.db.transaction((trx) => p.apply(trx, more, { rebuilding: false }));
    const warm = await cpuMeter(d.db);
    t = nowNs();
    await listSuggestions(d.db, websiteId, {
      from: new Date(last - 89 * DAY_MS).toISOString().slice(0, 10),
      to: new Date(last).toISOString().slice(0, 10),
      min_answers: 3,
    });
    const afterMs = secondsSince(t) * 1000;
    const afterCpu = await warm.stop();
    info(
      `suggestions: a read after 2,000 more answers on the last day (that day read again) ${afterMs.toFixed(1)} ms, CPU node ${Math.round(afterCpu.nodeUs / 1000)} ms + Postgres ${Math.round(afterCpu.pgUs / 1000)} ms`,
    );
  });
}

async function judgeFigure(quick: boolean): Promise<void> {
  const total = quick ? 5_000 : 20_000;
  const nats = await startNatsServer();
  const s = await startBenchServer(1, undefined, { natsUrl: nats.url, workers: true });
  try {
    const db = s.rt.database.db;
    const { id: websiteId, name: brand } = (await db('rm_websites').where('organization_id', s.organizationId).first('id', 'name')) as {
      id: string;
      name: string;
    };
    const ctx = { store: s.rt.store, organizationId: s.organizationId, actor: SYSTEM_ACTOR, websiteId };
    const facts: string[] = [];
    for (let i = 0; i < 20; i++) {
      const h = await handle(ctx, knowledgeStream(websiteId), Knowledge, (st) =>
        decideCreateFact(st, {
          website_id: websiteId,
          text: `${brand} ${factWords(i)[0]} has ${10 + i} ${factWords(i)[1]}.`,
          confidence: 'high',
          fact_id: seededUuid(rng(100 + i)),
        }),
      );
      if (isDomainError(h)) throw new Error(h.message);
      facts.push(h.result.fact_id);
    }
    const r = rng(42);
    const metadata = systemMetadata(s.organizationId, websiteId, r);
    const cpu = await cpuMeter(db);
    const t0 = nowNs();
    for (let made = 0, k = 0; made < total; k++) {
      const events = [];
      for (; events.length < 500 && made < total; made++) {
        const i = made % 20;
        const [a, b] = factWords(i);
        events.push({
          id: seededUuid(r),
          type: 'ResponseRecorded',
          data: engineAnswer(
            websiteId,
            seededUuid(r),
            made,
            new Date().toISOString(),
            `Many teams compare tools. ${brand} ${a} has ${99 + i} ${b}, say reviewers. Support is fine.`,
            [],
          ),
          metadata,
        });
      }
      await s.rt.store.append(`response-bench-${k}`, events, 'no_stream');
    }
    const appended = secondsSince(t0);
    for (;;) {
      const n = Number((await db('rm_fact_conflicts').where('website_id', websiteId).count<{ n: string }[]>('* as n'))[0].n);
      if (n >= total) break;
      if (secondsSince(t0) > 900) throw new Error(`only ${n} of ${total} conflicts after 900 s`);
      await sleep(100);
    }
    const took = secondsSince(t0);
    const used = await cpu.stop();
    await sleep(1000);
    const n = Number((await db('rm_fact_conflicts').where('website_id', websiteId).count<{ n: string }[]>('* as n'))[0].n);
    if (n !== total) throw new Error(`${n} conflicts for ${total} answers (each contradicts one fact)`);
    info(
      `judge: ${total} engine answers appended in ${appended.toFixed(1)} s (500 per append), each contradicting one of the 20 facts; all ${total} conflicts in the read model ${took.toFixed(1)} s after the first append; one instance`,
    );
    report('fact_judge_answers_per_s', total / took, 'answers/s', {
      cpu: perUnit(used, total, 'answer'),
      goal: { op: '>=', value: 2000 },
      note: `the area's follower of the log, simulated judge, 20 approved facts; CPU per answer: node ${Math.round(used.nodeUs / total)} us, Postgres ${Math.round(used.pgUs / total)} us (every read model and the relay run too)`,
    });
  } finally {
    await s.close();
    await nats.dispose();
  }
}

export const entityQuality: Bench = {
  name: 'entity-quality',
  about: 'competitor suggestions over 90 days of 1.2 M answers; the simulated fact judge through the real workers',
  async run({ quick }) {
    // BENCH_ONLY=suggestions|judge runs one of the two
    if (process.env.BENCH_ONLY !== 'judge') await suggestionsFigure(quick);
    if (process.env.BENCH_ONLY !== 'suggestions') await judgeFigure(quick);
  },
};
