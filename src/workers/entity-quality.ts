import type { Knex } from 'knex';
import { conflictAppends, conflictStream, decideCloseByFact, FactConflict } from '../../commands/entity-quality/conflicts';
import { suggestionsStream } from '../../commands/entity-quality/suggestions';
import { handle, load, newEventsFor } from '../../commands/handle';
import { Knowledge, knowledgeStream } from '../../commands/knowledge/knowledge';
import { answerNamesPutForward, type JudgedConflict, judgePrepared, namesBrand, type PreparedFact, prepareFacts } from '../analysis/entity-quality';
import { judgeWithEngine } from '../analysis/fact-judge';
import { creditsCharged } from '../domain/credits';
import type { ModelId } from '../domain/models';
import type { Engines } from '../engines/registry';
import { isEngineError } from '../engines/port';
import type { BusMessage } from '../bus/port';
import type { EventData } from '../domain/events';
import { deterministicId } from '../domain/ids';
import { appendMany, type EventStore, maxPosition, type Position, positionFromString, type StreamAppend } from '../eventstore/port';
import { SubjectErasedError } from '../eventstore/sealed';
import { openedMessage } from '../bus/relay';
import { systemContext, websiteContext } from './context';
import { coalescing } from '../domain/coalesce';
import { mapLimit } from '../domain/map-limit';
import { follower, type Projection } from '../eventstore/projection';
import { conflictsOfFact } from '../../queries/entity-quality/conflicts';
import { namesToAnnounce } from '../../queries/entity-quality/suggestions';
import type { Logger } from '../logger';

/** the checkpoint of the fact judge's follower of the log */
export const FACT_JUDGE_FOLLOWER = 'fact-judge';
/** Answers a name needs before its suggestion is an activity entry (the listing's default min_answers). */
export const ANNOUNCE_AT = 3;

export interface EntityQualityDeps {
  store: EventStore;
  db: Knex;
  logger: Logger;
  /** live mode: the writer engine judges (CONTENT_MODEL); absent, the simulated rule */
  factJudge?: { engines: Engines; model: ModelId };
  /** waits (bounded) until the suggestions read model has the answers up to this position */
  waitForSuggestions?: (position: Position) => Promise<unknown>;
  /** waits (bounded) until the conflicts read model has the events up to this position */
  waitForConflicts?: (position: Position) => Promise<unknown>;
}

type Recorded = EventData<'ResponseRecorded'>;
type Fact = { id: string; text: string };
/** A website's approved facts, and the same prepared for the simulated judge. */
interface Facts {
  list: Fact[];
  prepared: PreparedFact[];
}

const factsCache = new WeakMap<EventStore, Map<string, { revision: bigint; facts: Facts }>>();

/**
 * The website's approved facts (live, not hidden duplicates, text readable): its knowledge stream read from the cached
 * revision on (one small read, so a fact event is seen at once), the list made again only when the stream moved.
 */
async function readApprovedFacts(store: EventStore, websiteId: string): Promise<Facts> {
  let byStore = factsCache.get(store);
  if (!byStore) factsCache.set(store, (byStore = new Map()));
  const { state, revision } = await load(store, knowledgeStream(websiteId), Knowledge);
  const hit = byStore.get(websiteId);
  if (hit && hit.revision === revision) return hit.facts;
  const list: Fact[] = [];
  for (const f of state.facts.values())
    if (!f.archived && f.review_status === 'approved' && f.duplicate_of === null && f.text !== null) list.push({ id: f.id, text: f.text });
  const facts = { list, prepared: prepareFacts(list) };
  byStore.delete(websiteId);
  byStore.set(websiteId, { revision, facts });
  if (byStore.size > 5000) byStore.delete(byStore.keys().next().value as string);
  return facts;
}

const readings = new WeakMap<EventStore, (websiteId: string) => Promise<Facts>>();

/**
 * The website's approved facts as read after this call began: calls that come while a read is under way share the
 * next one (a read begun before a call may miss a fact changed just before it), so concurrent judges read once or twice.
 */
function approvedFacts(store: EventStore, websiteId: string): Promise<Facts> {
  let read = readings.get(store);
  if (!read) {
    read = coalescing(
      async (ids: string[]) => {
        const byId = new Map(await Promise.all([...new Set(ids)].map(async (id) => [id, await readApprovedFacts(store, id)] as const)));
        return ids.map((id) => byId.get(id) as Facts);
      },
      { alone: true },
    );
    readings.set(store, read);
  }
  return read(websiteId);
}

/** The live judge's stream of one answer: its charge, whose presence says the answer was judged (a redelivery asks nothing). */
export const factJudgeStream = (responseId: string) => `fact-judge-${responseId}`;

type Msg = Pick<BusMessage, 'id' | 'data' | 'metadata' | 'position'>;
/** A recorded answer (`msg`: its event) as one unit of a batch. */
interface Unit {
  msg: Msg;
  answer: Recorded;
}

/** Live engine calls at once within a batch. */
const ENGINE_CALLS = 8;

/**
 * The judge (simulated, or the writer engine in live mode) over units of one website: the facts read once, every
 * conflict appended in one go (each on its own stream, its id derived from answer and fact, so a redelivery adds
 * nothing), then the live judge's charges (after their conflicts, so a crash between asks again rather than losing
 * them). Returns how many conflicts.
 */
async function judge(deps: EntityQualityDeps, websiteId: string, units: readonly Unit[]): Promise<number> {
  const site = await websiteContext(deps.store, units[0].msg.metadata.organization_id, websiteId);
  if (!site) return 0;
  const brand = [site.website.name];
  // an answer once (the same answer twice in a batch is judged and charged once), and only one naming the brand: in
  // another, no sentence can conflict (no I/O for it)
  const byAnswer = new Map<string, { msg: Msg; d: Recorded }>();
  for (const { msg, answer: d } of units) if (namesBrand(d.text, brand)) byAnswer.set(d.response_id, { msg, d });
  if (!byAnswer.size) return 0;
  const facts = await approvedFacts(deps.store, websiteId);
  if (!facts.list.length) return 0;
  const texts = new Map(facts.list.map((f) => [f.id, f.text]));
  const items = [...byAnswer.values()];
  const judged = deps.factJudge
    ? await mapLimit(items, ENGINE_CALLS, ({ msg, d }) => engineJudgement(deps, msg, websiteId, brand[0], facts.list, d))
    : items.map(({ d }) => ({ conflicts: judgePrepared(d.text, brand, facts.prepared), charge: undefined }));
  const conflicts: StreamAppend[] = [];
  const charges: StreamAppend[] = [];
  items.forEach(({ msg, d }, i) => {
    const j = judged[i];
    if (!j) return;
    if (j.charge) charges.push(j.charge);
    const found = j.conflicts.map((c) => ({ ...c, fact_text: texts.get(c.fact_id)! }));
    const judgedBy = deps.factJudge ? ('engine' as const) : ('simulated' as const);
    conflicts.push(
      ...conflictAppends(systemContext(deps.store, msg), {
        website_id: websiteId,
        response_id: d.response_id,
        model: d.model,
        judge: judgedBy,
        conflicts: found,
      }),
    );
  });
  let found = 0;
  for (const o of await appendMany(deps.store, conflicts)) {
    // a fact erased since it was read: its conflict cannot be recorded, and must not be
    if (o.ok) found++;
    else if (!(o.error instanceof SubjectErasedError)) throw o.error;
  }
  // a charge's id derives from its answer: an answer judged twice at once (a lead lost mid-batch) is charged once
  for (const o of await appendMany(deps.store, charges)) if (!o.ok) throw o.error;
  return found;
}

/**
 * The writer engine's conflicts in one answer and its charge's append (on the answer's judge stream); null when the
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
): Promise<{ conflicts: JudgedConflict[]; charge: StreamAppend } | null> {
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
    charge: { streamId: stream, events: newEventsFor(systemContext(deps.store, msg), [charge]), expected: 'any' },
  };
}

/**
 * Names of these units' answers that have reached ANNOUNCE_AT answers (as the suggestions read model counts them so
 * far), are not tracked, dismissed or announced already: each announced once (`CompetitorSuggested`, id derived from
 * the website and name). A name whose last answers arrive before the read model has them is announced with its next
 * answer.
 */
async function announce(deps: EntityQualityDeps, websiteId: string, units: readonly Unit[]): Promise<void> {
  const keys = [...new Set(units.flatMap((u) => answerNamesPutForward(u.answer).map((n) => n.key)))];
  if (!keys.length) return;
  await deps.waitForSuggestions?.(units.map((u) => positionFromString(u.msg.position)).reduce(maxPosition));
  const rows = await namesToAnnounce(deps.db, websiteId, keys, ANNOUNCE_AT);
  if (!rows.length) return;
  const ctx = systemContext(deps.store, units[units.length - 1].msg);
  const events = newEventsFor(
    ctx,
    rows.map((row) => ({
      id: deterministicId('competitor-suggested', websiteId, row.key),
      type: 'CompetitorSuggested' as const,
      data: { website_id: websiteId, name: row.name, key: row.key, answers: row.answers },
    })),
  );
  await deps.store.append(suggestionsStream(websiteId), events, 'any');
}

/** Units judged and looked at for announcements, website by website. Returns how many conflicts. */
export async function judgeUnits(deps: EntityQualityDeps, units: readonly Unit[]): Promise<number> {
  const bySite = new Map<string, Unit[]>();
  for (const u of units) {
    const site = u.answer.website_id;
    const list = bySite.get(site);
    if (list) list.push(u);
    else bySite.set(site, [u]);
  }
  let found = 0;
  for (const [site, list] of bySite) {
    found += await judge(deps, site, list);
    await announce(deps, site, list);
  }
  return found;
}

/**
 * A fact edited (archived) or rejected: each of its conflicts still open in its stream is resolved there, so a later
 * resolve answers it unchanged and a dismiss 409, as the read model (which closed them already) shows. Returns how many.
 */
async function closeFactConflicts(deps: EntityQualityDeps, msg: Msg): Promise<number> {
  const d = msg.data as { fact_id: string };
  await deps.waitForConflicts?.(positionFromString(msg.position));
  const rows = await conflictsOfFact(deps.db, d.fact_id);
  let closed = 0;
  for (const r of rows) {
    const h = await handle({ ...systemContext(deps.store, msg), websiteId: r.website_id }, conflictStream(r.id), FactConflict, (s) =>
      decideCloseByFact(s, r.id),
    );
    if ('position' in h && h.position !== null) closed++;
  }
  return closed;
}

/** Answers a live batch holds at most: one round of engine calls, so that a batch ends well within its lead's lease. */
export const LIVE_BATCH = ENGINE_CALLS;

/**
 * The fact judge, the suggestions' announcer and the closer of an edited or rejected fact's conflicts, as a follower
 * of the log: every recorded answer (an engine's or an import's) is judged in the batches the log is read in, so
 * answers recorded faster than they are judged are judged together (one facts read, key lookup and append per
 * website). An answer recorded while no instance ran it is judged when one starts. Followed again after a crash, a
 * batch adds nothing: a conflict's id derives from answer and fact, the live judge's charge marks its answer judged,
 * and a closed conflict stays as it is.
 */
export function factJudgeFollower(deps: EntityQualityDeps): Projection {
  return follower({
    name: FACT_JUDGE_FOLLOWER,
    handles: ['ResponseRecorded', 'FactArchived', 'FactReviewed'],
    ignores: (e) => e.type === 'FactReviewed' && e.data.review_status !== 'rejected',
    async follow(events) {
      const answers = events.filter((e) => e.type === 'ResponseRecorded');
      if (answers.length)
        await judgeUnits(
          deps,
          answers.map((e) => ({ msg: openedMessage(e), answer: e.data })),
        );
      for (const e of events) if (e.type !== 'ResponseRecorded') await closeFactConflicts(deps, openedMessage(e));
    },
  });
}
