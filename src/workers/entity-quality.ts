import type { Knex } from 'knex';
import { conflictStream, decideCloseByFact, FactConflict, recordConflicts } from '../../commands/entity-quality/conflicts';
import { suggestionsStream } from '../../commands/entity-quality/suggestions';
import { handle, load, newEventsFor } from '../../commands/handle';
import { Knowledge, knowledgeStream } from '../../commands/knowledge/knowledge';
import { importStream } from '../../commands/responses/import-responses';
import { judgeSimulated, namesPutForward } from '../analysis/entity-quality';
import { judgeWithEngine } from '../analysis/fact-judge';
import { creditsCharged } from '../domain/credits';
import type { ModelId } from '../domain/models';
import type { Engines } from '../engines/registry';
import { isEngineError } from '../engines/port';
import type { BusMessage, Consumer } from '../bus/port';
import { decodeEvent, type EventData, type EventType } from '../domain/events';
import { deterministicId } from '../domain/ids';
import { type EventStore, type Position, positionFromString } from '../eventstore/port';
import { SubjectErasedError } from '../eventstore/sealed';
import { systemContext, websiteContext } from './context';
import { type BusWorkerDeps, startWorker } from './worker';

export const ENTITY_QUALITY_WORKER = 'entity-quality-workers';
export const ENTITY_QUALITY_WORKER_TYPES = [
  'ResponseRecorded',
  'ResponsesImported',
  'FactArchived',
  'FactReviewed',
] as const satisfies readonly EventType[];
/** Answers a name needs before its suggestion is an activity entry (the listing's default min_answers). */
export const ANNOUNCE_AT = 3;

export interface EntityQualityDeps extends BusWorkerDeps {
  db: Knex;
  concurrency?: number;
  /** live mode: the writer engine judges (CONTENT_MODEL); absent, the simulated rule */
  factJudge?: { engines: Engines; model: ModelId };
  /** waits (bounded) until the suggestions read model has the answers up to this position */
  waitForSuggestions?: (position: Position) => Promise<unknown>;
  /** waits (bounded) until the conflicts read model has the events up to this position */
  waitForConflicts?: (position: Position) => Promise<unknown>;
}

type Recorded = EventData<'ResponseRecorded'>;

/** How long the judge reuses a website's facts: answers come in bursts, and a second is fresh enough. */
const FACTS_TTL_MS = 1000;
const factsCache = new WeakMap<EventStore, Map<string, { at: number; value: Promise<{ id: string; text: string }[]> }>>();

/** The website's approved facts (live, not hidden duplicates, text readable), from its knowledge stream (at most once a second). */
function approvedFacts(store: EventStore, websiteId: string): Promise<{ id: string; text: string }[]> {
  let byStore = factsCache.get(store);
  if (!byStore) factsCache.set(store, (byStore = new Map()));
  const hit = byStore.get(websiteId);
  if (hit && Date.now() - hit.at < FACTS_TTL_MS) return hit.value;
  const value = load(store, knowledgeStream(websiteId), Knowledge).then(({ state }) => {
    const out: { id: string; text: string }[] = [];
    for (const f of state.facts.values())
      if (!f.archived && f.review_status === 'approved' && f.duplicate_of === null && f.text !== null) out.push({ id: f.id, text: f.text });
    return out;
  });
  byStore.set(websiteId, { at: Date.now(), value });
  value.catch(() => byStore.delete(websiteId));
  if (byStore.size > 5000) byStore.delete(byStore.keys().next().value as string);
  return value;
}

/** The live judge's stream of one answer: its charge, whose presence says the answer was judged (a redelivery asks nothing). */
export const factJudgeStream = (responseId: string) => `fact-judge-${responseId}`;

type Msg = Pick<BusMessage, 'id' | 'data' | 'metadata' | 'position'>;

/** The judge (simulated, or the writer engine in live mode) over answers of one website: conflicts recorded (one append per answer). Returns how many. */
async function judge(deps: EntityQualityDeps, msg: Msg, websiteId: string, answers: readonly Recorded[]): Promise<number> {
  const facts = await approvedFacts(deps.store, websiteId);
  if (!facts.length) return 0;
  const site = await websiteContext(deps.store, msg.metadata.organization_id, websiteId);
  if (!site) return 0;
  const brand = [site.website.name];
  const texts = new Map(facts.map((f) => [f.id, f.text]));
  let found = 0;
  for (const d of answers) {
    let conflicts: { fact_id: string; excerpt: string }[];
    let charge: (() => Promise<unknown>) | undefined;
    if (deps.factJudge) {
      const judged = await engineJudgement(deps, msg, websiteId, brand[0], facts, d);
      if (!judged) continue;
      ({ conflicts, charge } = judged);
    } else conflicts = judgeSimulated(d.text, brand, facts);
    // the charge marks the answer judged: appended after its conflicts, so a crash between asks again rather than losing them
    if (!conflicts.length) {
      await charge?.();
      continue;
    }
    try {
      await recordConflicts(systemContext(deps.store, msg), {
        website_id: websiteId,
        response_id: d.response_id,
        model: d.model,
        judge: deps.factJudge ? 'engine' : 'simulated',
        conflicts: conflicts.map((c) => ({ ...c, fact_text: texts.get(c.fact_id)! })),
      });
      found += conflicts.length;
    } catch (err) {
      // a fact erased since it was read: its conflict cannot be recorded, and must not be
      if (!(err instanceof SubjectErasedError)) throw err;
    }
    await charge?.();
  }
  return found;
}

/**
 * The writer engine's conflicts in one answer and the append of its charge (on the answer's judge stream); null when the
 * answer was judged already, names no brand, or the engine refused for good (logged; a retryable failure throws and
 * the message is delivered again).
 */
async function engineJudgement(
  deps: EntityQualityDeps,
  msg: Msg,
  websiteId: string,
  brand: string,
  facts: { id: string; text: string }[],
  d: Recorded,
): Promise<{ conflicts: { fact_id: string; excerpt: string }[]; charge: () => Promise<unknown> } | null> {
  const { engines, model } = deps.factJudge!;
  const stream = factJudgeStream(d.response_id);
  if ((await deps.store.readStream(stream, { maxCount: 1 })).length) return null;
  let judged: Awaited<ReturnType<typeof judgeWithEngine>>;
  try {
    judged = await judgeWithEngine(engines.engineFor(model), model, { text: d.text, brand, facts, day: d.run_at.slice(0, 10) });
  } catch (err) {
    if (!isEngineError(err) || err.retryable) throw err;
    deps.logger.warn({ response_id: d.response_id, model, kind: err.kind }, `fact judge refused: ${err.message}`);
    return null;
  }
  if (!judged) return null;
  const charge = creditsCharged({ kind: 'fact_judge', credits: judged.credits, website_id: websiteId, ref_id: d.response_id, step: 'judge', model });
  return {
    conflicts: judged.conflicts,
    charge: () => deps.store.append(stream, newEventsFor(systemContext(deps.store, msg), [charge]), 'any'),
  };
}

/**
 * Names of these answers that have reached ANNOUNCE_AT answers (as the suggestions read model counts them so far),
 * are not tracked, dismissed or announced already: each announced once (`CompetitorSuggested`, id derived from the
 * website and name). A name whose last answers arrive before the read model has them is announced with its next answer.
 */
async function announce(deps: EntityQualityDeps, msg: Msg, websiteId: string, answers: readonly Recorded[]): Promise<void> {
  const keys = [...new Set(answers.flatMap((d) => namesPutForward(d.text).map((n) => n.key)))];
  if (!keys.length) return;
  await deps.waitForSuggestions?.(positionFromString(msg.position));
  const r = await deps.db.raw(
    `select d.key, sum(d.answers)::int as answers, (array_agg(d.name order by d.first_seen))[1] as name
       from rm_suggestion_days d
      where d.website_id = ? and d.key = any(?)
        and not exists (select 1 from rm_suggestion_announced a where a.website_id = d.website_id and a.key = d.key)
        and not exists (select 1 from rm_suggestion_dismissed x where x.website_id = d.website_id and x.key = d.key)
        and not exists (select 1 from rm_suggestion_entities e where e.website_id = d.website_id and d.key = any(e.keys))
      group by d.key having sum(d.answers) >= ?`,
    [websiteId, keys, ANNOUNCE_AT],
  );
  if (!r.rows.length) return;
  const ctx = systemContext(deps.store, msg);
  const events = newEventsFor(
    ctx,
    r.rows.map((row: { key: string; name: string; answers: number }) => ({
      id: deterministicId('competitor-suggested', websiteId, row.key),
      type: 'CompetitorSuggested' as const,
      data: { website_id: websiteId, name: row.name, key: row.key, answers: row.answers },
    })),
  );
  await deps.store.append(suggestionsStream(websiteId), events, 'any');
}

/** One engine answer: judged against the facts, its names looked at for an announcement. */
export async function judgeAnswer(deps: EntityQualityDeps, msg: Msg): Promise<number> {
  const d = msg.data as Recorded;
  if (d.source === 'import') return 0;
  const found = await judge(deps, msg, d.website_id, [d]);
  await announce(deps, msg, d.website_id, [d]);
  return found;
}

/** The answers of one import call, read from its stream. */
export async function judgeImport(deps: EntityQualityDeps, msg: Msg): Promise<number> {
  const d = msg.data as EventData<'ResponsesImported'>;
  if (d.imported === 0) return 0;
  const answers = (await deps.store.readStream(importStream(d.import_id)))
    .filter((e) => e.type === 'ResponseRecorded')
    .map((e) => decodeEvent(e.id, e.type, e.data, e.metadata.schema_version).data as Recorded);
  const found = await judge(deps, msg, d.website_id, answers);
  await announce(deps, msg, d.website_id, answers);
  return found;
}

/**
 * A fact edited (archived) or rejected: each of its conflicts still open in its stream is resolved there, so a later
 * resolve answers it unchanged and a dismiss 409, as the read model (which closed them already) shows. Returns how many.
 */
export async function closeFactConflicts(deps: EntityQualityDeps, msg: Msg & { type: string }): Promise<number> {
  const d = msg.data as { fact_id: string; review_status?: string };
  if (msg.type === 'FactReviewed' && d.review_status !== 'rejected') return 0;
  await deps.waitForConflicts?.(positionFromString(msg.position));
  const rows: { id: string; website_id: string }[] = await deps.db('rm_fact_conflicts').where({ fact_id: d.fact_id }).select('id', 'website_id');
  let closed = 0;
  for (const r of rows) {
    const h = await handle({ ...systemContext(deps.store, msg), websiteId: r.website_id }, conflictStream(r.id), FactConflict, (s) =>
      decideCloseByFact(s, r.id),
    );
    if ('position' in h && h.position !== null) closed++;
  }
  return closed;
}

/** The fact judge and the suggestions' announcer (every answer, engine's or imported), and the closer of an edited or rejected fact's conflicts. */
export function startEntityQualityWorkers(deps: EntityQualityDeps): Promise<Consumer> {
  return startWorker({
    bus: deps.bus,
    name: ENTITY_QUALITY_WORKER,
    types: ENTITY_QUALITY_WORKER_TYPES,
    concurrency: deps.concurrency ?? 8,
    logger: deps.logger,
    handle: async (msg) => {
      if (msg.type === 'ResponsesImported') await judgeImport(deps, msg);
      else if (msg.type === 'FactArchived' || msg.type === 'FactReviewed') await closeFactConflicts(deps, msg);
      else await judgeAnswer(deps, msg);
    },
  });
}
