import type { Knex } from 'knex';
import type { FeedMapping } from '../../projections/activity';
import type { Bus } from '../bus/port';
import type { Config } from '../config';
import type { EventType } from '../domain/events';
import type { JobKindDefinition, JobKinds } from '../domain/jobs';
import type { Engines } from '../engines/registry';
import type { EventStore, Position } from '../eventstore/port';
import type { Projection } from '../eventstore/projection';
import type { RouteDef } from '../http/route';
import type { Logger } from '../logger';
import type { ToolDef } from '../mcp/tool';
import type { Outbound } from '../net/safe-fetch';
import type { Runtime, RuntimeOptions } from '../runtime';
import type { JobKindDeps, JobSpec } from '../workers/jobs';
import type { ReadModelName } from '.';

/** What the registry composes from every area's manifest, for the read models built from all of them. */
export interface Composed {
  feed: FeedMapping;
  jobKinds: JobKinds;
}

/** A kind of job: its request and resumes, and the workers' spec. */
export interface AreaJob extends JobKindDefinition {
  spec(deps: JobKindDeps): JobSpec<any>;
}

/**
 * One area's part of every shared list (src/areas/index.ts composes them). `N`: its read models' names, as
 * `waitForReadModels` takes them.
 */
/** What the runtime hands an area's worker when it starts (after the read models). */
export interface AreaWorkerDeps {
  config: Config;
  options: RuntimeOptions;
  db: Knex;
  store: EventStore;
  bus: Bus;
  logger: Logger;
  engines: Engines;
  /** how jobs and workers reach the outside world */
  outbound: Outbound;
  now?: () => Date;
  composed: Composed;
  /** the runtime itself, for a worker that runs the area's operations (src/app) */
  runtime: Runtime;
  /** read your writes: waits (bounded) until the named read models have passed position */
  waitForReadModels(position: Position, names: readonly ReadModelName[]): Promise<boolean>;
  /**
   * Starts a follower of the log on this instance (Projection.follow: work for each batch of its events, checkpointed,
   * one instance at a time), from the log's head the first time; stopped with the worker.
   */
  follow(projection: Projection, options?: { batchSize?: number }): Promise<{ stop(): Promise<void> }>;
}

/** A background worker of an area: what it consumes from the bus, its tables, and how it starts. */
export interface AreaWorker {
  /** the event types it consumes from the bus (the relay publishes them) */
  busTypes?: readonly EventType[] | ((all: Composed) => readonly EventType[]);
  /** its own tables, made when the runtime opens (before any route may read them) */
  migrate?(db: Knex): Promise<void>;
  /** null: it does not run on this instance (a schedule with SCHEDULER off) */
  start(deps: AreaWorkerDeps): Promise<{ stop(): Promise<void> } | null> | { stop(): Promise<void> } | null;
}

export interface AreaManifest<N extends string = never> {
  /** its read models by name, in start order; one made from every area's manifest is built from `Composed` */
  readModels?: Record<N, Projection | ((all: Composed) => Projection)>;
  routes?: readonly RouteDef<any, any, any>[];
  tools?: readonly ToolDef[];
  /** its kinds of job, by name (the streams' prefix) */
  jobs?: Record<string, AreaJob>;
  /** its event types that change a resource, each as an activity feed entry */
  feed?: FeedMapping;
  /** its event types the feed leaves out on purpose, each list with why */
  notInFeed?: readonly { why: string; types: readonly EventType[] }[];
  /** its background workers, started in registry order after the read models and the job workers */
  workers?: readonly AreaWorker[];
}
