/**
 * `entity-quality`: (1) `competitor_suggestions_ms`, GET /competitors/suggestions's query over 90-day ranges of one
 * website's 1.2 M answers over 365 days (`--quick`: 120,000), the read model built by the projection's own apply from
 * ResponseRecorded events whose texts list and bold 3 to 6 names out of 2,000 (Zipf-like); (2)
 * `fact_judge_answers_per_s`, engine answers (ResponseRecorded in answer streams, 500 per append) relayed over a
 * private nats-server to the entity-quality workers, each judged by the simulated judge against 20 approved facts and
 * contradicting one of them: answers per second from the first append until every conflict is in the read model.
 */
import { handle } from '../commands/handle';
import { Knowledge, knowledgeStream } from '../commands/knowledge/knowledge';
import { competitorSuggestionsProjection } from '../projections/competitor-suggestions';
import { listSuggestions } from '../queries/entity-quality/suggestions';
import { decideCreateFact } from '../commands/knowledge/facts';
import { type EventMetadata, SYSTEM_ACTOR } from '../src/domain/events';
import { isDomainError } from '../src/domain/errors';
import { MODEL_IDS } from '../src/domain/models';
import type { TypedEvent } from '../src/eventstore/port';
import { startNatsServer } from '../test/bus/nats-server';
import { anAnswer } from '../test/support/events';
import { rng, seededUuid } from './generate';
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
    const metadata: EventMetadata = {
      organization_id: seededUuid(r),
      website_id: websiteId,
      actor: SYSTEM_ACTOR,
      correlation_id: seededUuid(r),
      causation_id: null,
      time: new Date().toISOString(),
    };
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
    await d.db.raw('vacuum (analyze) rm_suggestion_days');
    const rows = (await d.db('rm_suggestion_days').count<{ n: string }[]>('* as n'))[0].n;
    info(
      `suggestions: ${total} answers applied in ${built.toFixed(1)} s (${Math.round(total / built)} answers/s through the projection); ${rows} name-day rows`,
    );
    const times: number[] = [];
    const cpu = await cpuMeter(d.db);
    let listed = 0;
    for (let i = 0; i < 40; i++) {
      const start = FIRST + Math.floor(r() * (DAYS - 90)) * DAY_MS;
      const from = new Date(start).toISOString().slice(0, 10);
      const to = new Date(start + 89 * DAY_MS).toISOString().slice(0, 10);
      const t = nowNs();
      const a = await listSuggestions(d.db, websiteId, { from, to, min_answers: 3 });
      if (i >= 5) times.push(secondsSince(t) * 1000);
      listed = a.suggestions.length;
    }
    const used = await cpu.stop();
    times.sort((x, y) => x - y);
    info(`suggestions: 35 timed reads (after 5 warm-up) of random 90-day ranges, min_answers 3; the last listed ${listed} names`);
    report('competitor_suggestions_ms', quantile(times, 0.95), 'ms', {
      goal: { op: '<=', value: 50 },
      note: `p95; p50 ${quantile(times, 0.5).toFixed(1)} ms; CPU per read: node ${Math.round(used.nodeUs / 40 / 1000)} ms, Postgres ${Math.round(used.pgUs / 40 / 1000)} ms; ${total} answers`,
    });
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
    const metadata: EventMetadata = {
      organization_id: s.organizationId,
      website_id: websiteId,
      actor: SYSTEM_ACTOR,
      correlation_id: seededUuid(r),
      causation_id: null,
      time: new Date().toISOString(),
    };
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
      note: `simulated judge, 20 approved facts; CPU per answer: node ${Math.round(used.nodeUs / total)} us, Postgres ${Math.round(used.pgUs / total)} us (every read model and the relay run too)`,
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
