import { importStream } from '../../commands/responses/import-responses';
import {
  type FoundObservation,
  importObservationsStream,
  type Observed,
  observationsStream,
  recordObservations,
  recordObservationsBatch,
} from '../../commands/responses/record-observations';
import { compiledEntities } from '../analysis/entity-cache';
import { createLlmJudge } from '../analysis/observation-judge';
import { type CompiledAttributes, compileAttributes, extractObservations } from '../analysis/observations';
import type { BusMessage, Consumer } from '../bus/port';
import { decodeEvent, type EventData, type EventType } from '../domain/events';
import { isModelId } from '../domain/models';
import type { Engines } from '../engines/registry';
import { systemContext, type WebsiteContext, websiteContext } from './context';
import { type BusWorkerDeps, startWorker } from './worker';

export const OBSERVATION_WORKER = 'observation-workers';
/**
 * What the observation worker reads from the bus: the answers of each import and, for the LLM judge, each engine answer
 * (with the rules, the response worker records an engine answer's observations with the answer itself).
 */
export const observationWorkerTypes = (extractor: ExtractorChoice): readonly EventType[] =>
  extractor.kind === 'llm' ? ['ResponseRecorded', 'ResponsesImported'] : ['ResponsesImported'];

/** `rules`: the deterministic extractor; `llm:<model>`: a judge model of the catalogue asked through its engine. */
export type ExtractorChoice = { kind: 'rules' } | { kind: 'llm'; model: string };

export function parseExtractor(value: string | undefined): ExtractorChoice {
  if (!value || value === 'rules') return { kind: 'rules' };
  const m = /^llm:(.+)$/.exec(value);
  if (m && isModelId(m[1])) return { kind: 'llm', model: m[1] };
  throw new Error(`OBSERVATION_EXTRACTOR must be 'rules' or 'llm:<model id of the catalogue>', not ${JSON.stringify(value)}`);
}

export interface ObservationWorkerDeps extends BusWorkerDeps {
  engines: Engines;
  extractor: ExtractorChoice;
  concurrency?: number;
}

const attributeCache = new Map<string, CompiledAttributes>();
function attributesOf(attrs: { id: string; name: string; description: string | null }[]): CompiledAttributes {
  const key = JSON.stringify(attrs.map((a) => [a.id, a.name, a.description]));
  let c = attributeCache.get(key);
  if (!c) {
    c = compileAttributes(attrs);
    if (attributeCache.size >= 500) attributeCache.clear();
    attributeCache.set(key, c);
  }
  return c;
}

type Recorded = EventData<'ResponseRecorded'>;

const observedOf = (d: Recorded, extractor: ExtractorChoice['kind'], observations: FoundObservation[], credits?: Observed['credits']): Observed => ({
  response_id: d.response_id,
  website_id: d.website_id,
  prompt_id: d.prompt_id,
  location_id: d.location_id,
  schedule_id: d.schedule_id,
  model: d.model,
  observed_at: d.run_at,
  extractor,
  observations,
  credits,
});

/** The deterministic extractor's observations of one answer; null when it finds none (or the site has no attributes). */
export function ruleObservations(site: WebsiteContext, d: Recorded): Observed | null {
  if (d.observations_supplied || site.catalog.attributes.size === 0) return null;
  const found = extractObservations(compiledEntities(d.website_id, site.entities), attributesOf([...site.catalog.attributes.values()]), d.text);
  return found.length ? observedOf(d, 'rules', found) : null;
}

/**
 * What one answer says about the website's entities for its attributes: the observations found (and a judge's
 * credits), or null when there is nothing to record (no attributes, an import that carried its own observations,
 * nothing found by the rules).
 */
async function findObservations(deps: ObservationWorkerDeps, site: WebsiteContext, d: Recorded): Promise<Observed | null> {
  if (deps.extractor.kind === 'rules') return ruleObservations(site, d);
  if (d.observations_supplied) return null;
  const attributes = [...site.catalog.attributes.values()];
  if (!attributes.length) return null;
  let credits: Observed['credits'];
  const model = deps.extractor.model;
  const judge = createLlmJudge(deps.engines.engineFor(model), model, {
    onWarning: (message: string) => deps.logger.warn({ response_id: d.response_id, model }, `observation judge: ${message}`),
    onUsage: (usage) => {
      credits = { model, credits: usage.credits, input_tokens: usage.input_tokens ?? null, output_tokens: usage.output_tokens ?? null };
    },
  });
  const found = await judge.extract({
    text: d.text,
    entities: site.entities.map((e) => ({ id: e.id, name: e.name, is_self: e.is_self })),
    attributes,
    day: d.run_at.slice(0, 10),
  });
  if (!found.length && !credits) return null;
  return observedOf(d, 'llm', found, credits);
}

/** One answer an engine gave (answers an import brought are read with their import). Returns the count recorded. */
export async function observeAnswer(deps: ObservationWorkerDeps, msg: Pick<BusMessage, 'id' | 'data' | 'metadata'>): Promise<number> {
  const d = msg.data as Recorded;
  if (d.observations_supplied || d.source === 'import') return 0;
  // a judge call costs credits: an answer already judged (a redelivered message) is not asked again
  if (deps.extractor.kind === 'llm' && (await deps.store.readStream(observationsStream(d.response_id), { maxCount: 1 })).length) return 0;
  const site = await websiteContext(deps.store, msg.metadata.organization_id, d.website_id);
  const o = site && (await findObservations(deps, site, d));
  if (!o) return 0;
  await recordObservations(systemContext(deps.store, msg), o);
  return o.observations.length;
}

/** The answers of one import call, read from its stream and recorded in one append. Returns the count recorded. */
export async function observeImport(deps: ObservationWorkerDeps, msg: Pick<BusMessage, 'id' | 'data' | 'metadata'>): Promise<number> {
  const d = msg.data as EventData<'ResponsesImported'>;
  if (d.imported === 0) return 0;
  const batch = importObservationsStream(d.import_id);
  if ((await deps.store.readStream(batch, { maxCount: 1 })).length) return 0;
  const site = await websiteContext(deps.store, msg.metadata.organization_id, d.website_id);
  if (!site || site.catalog.attributes.size === 0) return 0;
  const answers = (await deps.store.readStream(importStream(d.import_id)))
    .filter((e) => e.type === 'ResponseRecorded')
    .map((e) => decodeEvent(e.id, e.type, e.data, e.metadata.schema_version).data as Recorded);
  const found: Observed[] = [];
  // judge calls go a few at a time (the engine's own limiter bounds them too); the rules are synchronous
  for (let i = 0; i < answers.length; i += 8) {
    for (const o of await Promise.all(answers.slice(i, i + 8).map((a) => findObservations(deps, site, a)))) if (o) found.push(o);
  }
  if (!found.length) return 0;
  await recordObservationsBatch(systemContext(deps.store, msg), batch, found);
  return found.reduce((n, o) => n + o.observations.length, 0);
}

export function startObservationWorkers(deps: ObservationWorkerDeps): Promise<Consumer> {
  return startWorker({
    bus: deps.bus,
    name: OBSERVATION_WORKER,
    types: observationWorkerTypes(deps.extractor),
    concurrency: deps.concurrency ?? 8,
    logger: deps.logger,
    handle: async (msg) => {
      if (msg.type === 'ResponsesImported') await observeImport(deps, msg);
      else await observeAnswer(deps, msg);
    },
  });
}
