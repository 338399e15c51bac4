/**
 * The registry: every area, one line each (src/areas/<area>.ts, its manifest), in the order their routes and tools
 * are listed (the OpenAPI document's and tools/list's order) and their read models start. Every shared list is built
 * here from the manifests: the read models, the REST routes, the MCP tools, the kinds of job and their specs, the
 * activity feed's mapping, the areas' workers and the bus types they consume. Nothing below imports this file at
 * runtime: what a lower layer needs (the job kinds, the feed) is handed to it from here or from the runtime.
 */
import type { FeedMapping } from '../../projections/activity';
import type { EventType } from '../domain/events';
import type { JobKindDefinition, JobKinds } from '../domain/jobs';
import type { Projection } from '../eventstore/projection';
import type { RouteDef } from '../http/route';
import type { ToolDef } from '../mcp/tool';
import type { JobKindDeps, JobSpec } from '../workers/jobs';
import { activity } from './activity';
import { aiAccess } from './ai-access';
import { alerts } from './alerts';
import { aiValue } from './ai-value';
import { allowances } from './allowances';
import { apiKeys } from './api-keys';
import { catalog } from './catalog';
import { content } from './content';
import { crawlers } from './crawlers';
import { credits } from './credits';
import { discovery } from './discovery';
import { evidence } from './evidence';
import { emails } from './emails';
import { entityQuality } from './entity-quality';
import { idempotency } from './idempotency';
import { jobs } from './jobs';
import { knowledge } from './knowledge';
import type { AreaManifest, AreaWorker, Composed } from './manifest';
import { metrics } from './metrics';
import { observations } from './observations';
import { organizations } from './organizations';
import { pitches } from './pitches';
import { probe } from './probe';
import { reports } from './reports';
import { responses } from './responses';
import { seo } from './seo';
import { shopping } from './shopping';
import { team } from './team';
import { webhooks } from './webhooks';
import { websites } from './websites';

export const areas = [
  organizations,
  websites,
  apiKeys,
  activity,
  aiAccess,
  catalog,
  responses,
  metrics,
  observations,
  shopping,
  jobs,
  allowances,
  idempotency,
  emails,
  probe,
  team,
  aiValue,
  knowledge,
  credits,
  seo,
  discovery,
  pitches,
  content,
  evidence,
  crawlers,
  entityQuality,
  webhooks,
  alerts,
  reports,
] as const;

/** A read model's name: what a write names when it waits for the read models its caller reads next. */
export type ReadModelName = ReadModelsOf<(typeof areas)[number]>;
type ReadModelsOf<A> = A extends AreaManifest<infer N> ? N : never;

/** Every event type that changes a resource, as a feed entry: the areas' mappings together. */
export const feed: FeedMapping = Object.assign({}, ...areas.map((a) => a.feed ?? {}));

const jobEntries = areas.flatMap((a) => Object.entries(a.jobs ?? {}));

/** Every kind of job: its request and the events that give a waiting job work again. */
export const JOB_KINDS: JobKinds = Object.fromEntries(
  jobEntries.map(([kind, { requested, resumeOn }]): [string, JobKindDefinition] => [kind, resumeOn ? { requested, resumeOn } : { requested }]),
);

/** The kinds of job every instance runs. */
export const jobSpecs = (deps: JobKindDeps): JobSpec<any>[] => jobEntries.map(([, job]) => job.spec(deps));

/** What every area's read models and workers may be built from: the feed and the kinds of job of all of them. */
export const composed: Composed = { feed, jobKinds: JOB_KINDS };

/** Every area's background worker, in registry order. */
export const areaWorkers: AreaWorker[] = areas.flatMap((a) => a.workers ?? []);

/** The event types the areas' workers consume from the bus. */
export const workerBusTypes: EventType[] = areaWorkers.flatMap((w) => (typeof w.busTypes === 'function' ? w.busTypes(composed) : (w.busTypes ?? [])));

/** Every read model, in the order they are started. */
export const readModels: Projection[] = areas.flatMap((a) =>
  Object.entries<Projection | ((all: Composed) => Projection)>(a.readModels ?? {}).map(([name, p]) => {
    const built = typeof p === 'function' ? p(composed) : p;
    if (built.name !== name) throw new Error(`projection ${built.name} is indexed as ${name}`);
    return built;
  }),
);

/** Every REST route. */
export const restRoutes: RouteDef<any, any, any>[] = areas.flatMap((a) => a.routes ?? []);

/** Every MCP tool. */
export const allTools: ToolDef[] = areas.flatMap((a) => a.tools ?? []);
