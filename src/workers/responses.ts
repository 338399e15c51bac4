import type { Knex } from 'knex';
import { markPromptAnswered } from '../../commands/catalog/mark-prompt-answered';
import type { CommandContext } from '../../commands/handle';
import { type Outcome, recordOutcome, type Requested, responseIdOf, responseStream } from '../../commands/responses/record-outcome';
import type { Delivery } from '../bus/memory';
import type { BusMessage, Consumer } from '../bus/port';
import { isDomainError } from '../domain/errors';
import { decodeEvent, type EventData, type EventMetadata, type EventOf, type EventType } from '../domain/events';
import type { Engines } from '../engines/registry';
import { type AnswerRequest, isEngineError } from '../engines/port';
import type { EventStore, Position } from '../eventstore/port';
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
  /** what the areas do with each engine answer (AreaWorker.answers), before its unit is settled */
  onAnswer?: (answer: RecordedAnswer) => Promise<void>;
  now?: () => Date;
}

/** An engine answer as its response worker recorded it. */
export interface RecordedAnswer {
  id: string;
  data: EventData<'ResponseRecorded'>;
  metadata: EventMetadata;
  position: Position;
}

/**
 * Answers one unit of work: marks its prompt answered, asks the model's engine (its adapter retries with backoff),
 * and records the answer and its credits, or the failure. An outcome the store refuses on its content is recorded as
 * a failure (`unrecordable`) instead; it throws only when the store could not be reached, so the bus delivers the
 * unit again. The outcome's id derives from the unit, so nothing is recorded twice.
 */
export async function answerUnit(
  deps: ResponseWorkerDeps,
  msg: Pick<BusMessage, 'id' | 'data' | 'metadata'>,
  delivery?: Delivery,
): Promise<'recorded' | 'failed' | 'skipped'> {
  const req = msg.data as Requested;
  // a unit seen before (delivered again, or sent again by the sweeper) may have its outcome already: skip the engine
  const again = !delivery || delivery.count > 1 || msg.id !== req.request_id;
  if (again) {
    const status = await unitStatus(deps.db, req.request_id);
    if (status !== undefined && status !== 'pending') {
      // its answer's hooks may have failed on the delivery that recorded it
      if (status === 'recorded') await answerAgain(deps, req);
      return 'skipped';
    }
  }
  const ctx = systemContext(deps.store, msg, deps.now);
  const { outcome, site } = await answer(deps, ctx, req);
  const rules = (deps.extractor?.kind ?? 'rules') === 'rules';
  let r: Awaited<ReturnType<typeof recordOutcome>>;
  let kind = outcome.kind;
  try {
    r = await recordOutcome(ctx, req, outcome, site && rules ? (d) => ruleObservations(site, d) : undefined);
  } catch (err) {
    // refused on its content, it would be refused on every delivery: the unit fails instead, under the same event id
    const reason = unrecordableReason(err);
    if (!reason) throw err;
    r = await recordOutcome(ctx, req, failed(UNRECORDABLE, reason));
    kind = 'failed';
    if (r.recorded) {
      const end = { id: req.request_id, kind: 'unit' as const, organization_id: ctx.organizationId, website_id: req.website_id, reason };
      await noteUnrecorded(deps.db, deps.logger, end, err);
    }
  }
  if (!r.recorded) return 'skipped';
  deps.onOutcome?.(r.position);
  const [first] = r.events;
  if (deps.onAnswer && first.type === 'ResponseRecorded' && r.position)
    await deps.onAnswer({ id: first.id, data: first.data as RecordedAnswer['data'], metadata: first.metadata, position: r.position });
  return kind === 'answered' ? 'recorded' : 'failed';
}

/** A unit's answer recorded on an earlier delivery, read back for the hooks. */
async function answerAgain(deps: ResponseWorkerDeps, req: Requested): Promise<void> {
  if (!deps.onAnswer) return;
  const e = (await deps.store.readStream(responseStream(responseIdOf(req.request_id)))).find((x) => x.type === 'ResponseRecorded');
  if (!e) return;
  const d = decodeEvent(e.id, e.type, e.data, e.metadata.schema_version) as EventOf<'ResponseRecorded'>;
  await deps.onAnswer({ id: e.id, data: d.data, metadata: e.metadata, position: e.position });
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
  return startWorker({
    bus: deps.bus,
    name: RESPONSE_WORKER,
    types: RESPONSE_WORKER_TYPES,
    concurrency: deps.concurrency ?? 16,
    logger: deps.logger,
    handle: async (msg, delivery) => {
      await answerUnit(deps, msg, delivery);
    },
  });
}
