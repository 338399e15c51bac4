import type { FeedMapping } from '../../projections/activity';
import type { EventType } from '../domain/events';
import type { JobKindDefinition, JobKinds } from '../domain/jobs';
import type { Projection } from '../eventstore/projection';
import type { RouteDef } from '../http/route';
import type { ToolDef } from '../mcp/tool';
import type { JobKindDeps, JobSpec } from '../workers/jobs';

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
}
