import type { Knex } from 'knex';
import { markPromptAnswered } from '../../commands/catalog/mark-prompt-answered';
import type { CommandContext } from '../../commands/handle';
import { type Outcome, outcomeAppend, recordOutcomes, type Requested } from '../../commands/responses/record-outcome';
import type { Delivery } from '../bus/memory';
import type { BusMessage, Consumer } from '../bus/port';
import { isDomainError } from '../domain/errors';
import type { EventType } from '../domain/events';
import type { Engines } from '../engines/registry';
import { type AnswerRequest, isEngineError } from '../engines/port';
import { comparePositions, type EventStore, type Position } from '../eventstore/port';
import { systemContext, type WebsiteContext, websiteContext } from './context';
import { type ExtractorChoice, ruleObservations } from './observations';
import { type BusWorkerDeps, startWorker } from './worker';
import { problemLog } from '../app/problem';
import { noteUnrecorded, UNRECORDABLE, unrecordableReason } from './unrecorded';
import { unitStatus } from '../../queries/responses/runs';

export const RESPONSE_WORKER = 'response-workers';
export const RESPONSE_WORKER_TYPES: readonly EventType[] = ['ResponseRequested'];

export interface ResponseWorkerDeps extends BusWorkerDeps {
  db: Knex;
  engines: Engines;
  /** units answered at once by this instance */
  concurrency?: number;
  /** with the rules (the default), an answer's observations are found here and recorded with it */
  extractor?: ExtractorChoice;
  /** told of every outcome this instance records (the last one of a run frees its schedule's slot) */
  onOutcome?: (position: Position | null) => void;
  now?: () => Date;
}

/** A unit's outcome as its worker decided it, waiting to be recorded (alone, or with others in one append). */
export interface Decided {
  req: Requested;
  ctx: CommandContext;
  outcome: Outcome;
  site?: WebsiteContext;
}

type Kind = 'recorded' | 'failed' | 'skipped';

/**
 * Answers one unit of work: marks its prompt answered, asks the model's engine (its adapter retries with backoff),
 * and records the answer and its credits, or the failure. An outcome the store refuses on its content is recorded as
 * a failure (`unrecordable`) instead; it throws only when the store could not be reached, so the bus delivers the
 * unit again. The outcome's id derives from the unit, so nothing is recorded twice. `record`: how the decided outcome
 * is recorded (alone by default; the worker pool gathers concurrent units' outcomes, outcomeBatcher).
 */
export async function answerUnit(
  deps: ResponseWorkerDeps,
  msg: Pick<BusMessage, 'id' | 'data' | 'metadata'>,
  delivery?: Delivery,
  record: (d: Decided) => Promise<Kind> = async (d) => unwrap((await recordDecided(deps, [d]))[0]),
): Promise<Kind> {
  const req = msg.data as Requested;
  // a unit seen before (delivered again, or sent again by the sweeper) may have its outcome already: skip the engine
  const again = !delivery || delivery.count > 1 || msg.id !== req.request_id;
  if (again) {
    const status = await unitStatus(deps.db, req.request_id);
    if (status !== undefined && status !== 'pending') return 'skipped';
  }
  const ctx = systemContext(deps.store, msg, deps.now);
  const { outcome, site } = await answer(deps, ctx, req);
  return record({ req, ctx, outcome, site });
}

type Settled = { kind: Kind } | { error: unknown };
const unwrap = (r: Settled): Kind => {
  if ('error' in r) throw r.error;
  return r.kind;
};

/**
 * Records decided outcomes in one append (each on its unit's own stream), then tells onOutcome once. Per unit:
 * recorded, failed, skipped (it had an outcome already), or the error its message fails with (the store not reached:
 * the unit is delivered again).
 */
async function recordDecided(deps: ResponseWorkerDeps, list: readonly Decided[]): Promise<Settled[]> {
  const rules = (deps.extractor?.kind ?? 'rules') === 'rules';
  const appends = list.map((d) => outcomeAppend(d.ctx, d.req, d.outcome, d.site && rules ? (x) => ruleObservations(d.site!, x) : undefined));
  const stored = await recordOutcomes(deps.store, appends);
  const out: Settled[] = [];
  let last: Position | null = null;
  for (let i = 0; i < list.length; i++) {
    const d = list[i];
    let r = stored[i];
    let kind: Kind = d.outcome.kind === 'answered' ? 'recorded' : 'failed';
    // refused on its content, it would be refused on every delivery: the unit fails instead, under the same event id
    const reason = r.ok ? null : unrecordableReason(r.error);
    if (!r.ok && reason) {
      const refused = r.error;
      [r] = await recordOutcomes(deps.store, [outcomeAppend(d.ctx, d.req, failed(UNRECORDABLE, reason))]);
      kind = 'failed';
      if (r.ok && r.recorded) {
        const end = { id: d.req.request_id, kind: 'unit' as const, organization_id: d.ctx.organizationId, website_id: d.req.website_id, reason };
        await noteUnrecorded(deps.db, deps.logger, end, refused);
      }
    }
    if (!r.ok) out.push({ error: r.error });
    else if (!r.recorded || !r.position) out.push({ kind: 'skipped' });
    else {
      out.push({ kind });
      if (!last || comparePositions(r.position, last) > 0) last = r.position;
    }
  }
  if (last) deps.onOutcome?.(last);
  return out;
}

/** How long a decided outcome waits for the outcomes of the units being answered beside it. */
const GATHER_MS = 10;

/**
 * The worker pool's recorder: an outcome decided while other units are still being answered waits for theirs (at most
 * `waitMs`) and goes with them in one recordDecided; while one batch is recorded, the next gathers. Fewer, larger
 * appends, instead of one per unit.
 */
export function outcomeBatcher(deps: ResponseWorkerDeps, waitMs = GATHER_MS): () => Unit {
  let engaged = 0;
  let pending: { d: Decided; resolve: (k: Kind) => void; reject: (err: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | null = null;
  let recording = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (recording || pending.length === 0) return;
    const batch = pending;
    pending = [];
    recording = true;
    recordDecided(
      deps,
      batch.map((b) => b.d),
    )
      .then(
        (settled) => {
          for (let i = 0; i < batch.length; i++) {
            const r = settled[i];
            if ('error' in r) batch[i].reject(r.error);
            else batch[i].resolve(r.kind);
          }
        },
        (err) => {
          for (const b of batch) b.reject(err);
        },
      )
      .finally(() => {
        recording = false;
        // what gathered meanwhile goes now if nothing else is coming, else when its wait runs out
        if (pending.length && (engaged === 0 || !timer)) flush();
      });
  };
  return () => {
    engaged++;
    let done = false;
    const release = () => {
      if (done) return;
      done = true;
      engaged--;
      // every unit in hand has decided: nothing more to wait for
      if (engaged === 0) flush();
    };
    return {
      record: (d) =>
        new Promise<Kind>((resolve, reject) => {
          pending.push({ d, resolve, reject });
          timer ??= setTimeout(flush, waitMs);
          release();
        }),
      release,
    };
  };
}

/** One unit in a worker pool's hands: its outcome recorded with the others' (record), or none to record (release). */
interface Unit {
  record(d: Decided): Promise<Kind>;
  release(): void;
}

/**
 * The first-answer markers this process has made or seen (a marked prompt stays marked), and the ones it is making:
 * the units of one prompt arrive together, and only the first needs the catalogue's lock.
 */
const markers = new WeakMap<EventStore, Map<string, Promise<boolean>>>();
function markAnswered(ctx: CommandContext, websiteId: string, promptId: string): Promise<boolean> {
  let byPrompt = markers.get(ctx.store);
  if (!byPrompt) markers.set(ctx.store, (byPrompt = new Map()));
  let marking = byPrompt.get(promptId);
  if (!marking) {
    if (byPrompt.size > 100_000) byPrompt.clear();
    marking = markPromptAnswered(ctx, { website_id: websiteId, prompt_id: promptId }).then((r) => !isDomainError(r));
    byPrompt.set(promptId, marking);
    // a refusal (the prompt was hard-deleted) or an error is not remembered: the next unit asks the catalogue again
    marking.then(
      (ok) => ok || byPrompt.delete(promptId),
      () => byPrompt.delete(promptId),
    );
  }
  return marking;
}

const failed = (error_kind: string, message: string, attempts: number | null = null): Outcome => ({ kind: 'failed', error_kind, message, attempts });

async function answer(deps: ResponseWorkerDeps, ctx: CommandContext, req: Requested): Promise<{ outcome: Outcome; site?: WebsiteContext }> {
  let site = await websiteContext(deps.store, ctx.organizationId, req.website_id);
  // what a second-old read lacks (a prompt created just before its run), or refuses, is read again from the streams
  if (site?.website.status !== 'active' || !site.catalog.prompts.has(req.prompt_id)) {
    site = await websiteContext(deps.store, ctx.organizationId, req.website_id, { fresh: true });
  }
  if (!site) return { outcome: failed('website_not_found', 'the website does not exist') };
  if (site.website.status !== 'active') return { outcome: failed('website_inactive', `the website is ${site.website.status}`) };
  const prompt = site.catalog.prompts.get(req.prompt_id);
  if (!prompt || prompt.hard_deleted) return { outcome: failed('prompt_not_found', 'the prompt was deleted before it was answered') };
  // the first answer's marker (an answered prompt stays answered: only the first needs the catalogue's lock; the
  // context read a second ago may predate the marker, so this process also remembers the prompts it saw marked)
  if (!prompt.has_answers && !(await markAnswered(ctx, req.website_id, req.prompt_id))) {
    return { outcome: failed('prompt_not_found', 'the prompt was deleted before it was answered') };
  }
  const location = req.location_id ? site.catalog.locations.get(req.location_id) : undefined;
  const persona = req.persona_id ? site.catalog.personas.get(req.persona_id) : undefined;
  const request: AnswerRequest = {
    model: req.model,
    prompt: prompt.text,
    day: req.day,
    ...(location && {
      location: { country: location.country, ...(location.region && { region: location.region }), ...(location.city && { city: location.city }) },
    }),
    ...(persona && { persona: { name: persona.name, ...(persona.description && { description: persona.description }) } }),
    website: site.engineWebsite,
    ...(req.sample_index && { sample: req.sample_index }),
  };
  try {
    const answer = await deps.engines.engineFor(req.model).ask(request);
    return { outcome: { kind: 'answered', answer, run_at: req.run_at ?? (deps.now?.() ?? new Date()).toISOString() }, site };
  } catch (err) {
    if (isEngineError(err)) return { outcome: failed(err.kind, err.message, err.attempts ?? null) };
    deps.logger.error({ ...problemLog(err), request_id: req.request_id, model: req.model }, 'engine call failed unexpectedly');
    return { outcome: failed('internal', err instanceof Error ? err.message : String(err)) };
  }
}

/** The response worker pool of this instance: one durable consumer shared with every other instance. */
export function startResponseWorkers(deps: ResponseWorkerDeps): Promise<Consumer> {
  const engage = outcomeBatcher(deps);
  return startWorker({
    bus: deps.bus,
    name: RESPONSE_WORKER,
    types: RESPONSE_WORKER_TYPES,
    concurrency: deps.concurrency ?? 16,
    logger: deps.logger,
    handle: async (msg, delivery) => {
      const unit = engage();
      await answerUnit(deps, msg, delivery, unit.record).finally(unit.release);
    },
  });
}
