import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createMemoryBus } from './bus/memory';
import { type NatsBusOptions, openNatsBus } from './bus/nats';
import type { Bus } from './bus/port';
import { createRelayProjection } from './bus/relay';
import { sealedBus } from './bus/sealed';
import type { Config } from './config';
import { type Database, openPglite, openPostgres } from './db';
import { lockDataDir } from './embedded-lock';
import type { EventStore, Position } from './eventstore/port';
import { APPENDED_CHANNEL, openPostgresEventStore } from './eventstore/postgres';
import type { Projection } from './eventstore/projection';
import { CheckpointWrites } from './eventstore/checkpoints';
import { SharedFeed } from './eventstore/feed';
import { createErasureProjection } from './eventstore/erasure';
import { openSubjectKeyring } from './eventstore/keyring';
import { Sealer, sealEventStore } from './eventstore/sealed';
import { ProjectionRunner, prepareRunners } from './eventstore/runner';
import { createEngines, type Engines } from './engines/registry';
import { createSafeFetcher, type Outbound } from './net/safe-fetch';
import { migrateLimits } from './limits/migrate';
import type { SafeFetch } from './net/safe-fetch';
import type { Logger } from './logger';
import { factsCache, warmMetrics } from '../queries/metrics/metrics';
import { realignSite } from '../projections/answers/realign';
import { startJobSweeper } from './workers/job-sweeper';
import type { Composed } from './areas/manifest';
import { areaWorkers, composed, JOB_KINDS, jobSpecs, type ReadModelName, readModels, workerBusTypes } from './areas';
import { type JobSpec, startJobWorker } from './workers/jobs';
import type { EmailWorkerDeps } from './workers/email';
import { parseExtractor, startObservationWorkers } from './workers/observations';
import { startResponseWorkers } from './workers/responses';
import { BUS_STREAM_PREFIXES, busEventTypes } from './workers/types';
import { startRunEnds } from './workers/run-ends';
import { startScheduler } from './workers/scheduler';
import { migrateSweeper, startSweeper } from './workers/sweeper';
import { migrateUnrecorded } from './workers/unrecorded';

export interface Runtime {
  config: Config;
  logger: Logger;
  database: Database;
  store: EventStore;
  bus: Bus;
  /** read-model runners by projection name */
  runners: Map<string, ProjectionRunner>;
  /** the checkpointed relay from the event store to the bus */
  relay: ProjectionRunner;
  /** the areas' followers of the log (AreaWorkerDeps.follow) by name, while the workers run */
  followers: Map<string, ProjectionRunner>;
  /** what the registry composed from every area's manifest (the activity feed's mapping, the kinds of job), for the layers below it */
  composed: Composed;
  /** answer engines per model (simulated, or live provider adapters; a model without a key is reported at start) */
  engines: Engines;
  /**
   * Read your writes: waits (bounded) until the named read models have passed position. A write names the read models
   * its caller reads next ('all' only where every one is read: start-up, tests).
   */
  waitForReadModels(position: Position | null, names: readonly ReadModelName[] | 'all', timeoutMs?: number): Promise<boolean>;
  /** how long a write waits for its read models (waitForReadModels' default), and once more for one that lags */
  readonly writeWaits: WriteWaits;
  startProjections(): Promise<void>;
  /** response, observation and job workers, run ends, the scheduler, the sweepers of lost units and jobs, and every area's workers (after startProjections) */
  startWorkers(): Promise<void>;
  close(): Promise<void>;
}

/** A write's waits for the read models its caller reads next (src/app/context.ts, `settle`). */
export interface WriteWaits {
  /** the usual bound */
  usualMs: number;
  /** the second wait, for a read model lagging past the usual bound (a loaded host) */
  readBackMs: number;
}

export const WRITE_WAITS: Readonly<WriteWaits> = Object.freeze({ usualMs: 5000, readBackMs: 20_000 });

export interface RuntimeOptions {
  /** how long this instance's projection leases last (LEASE_SECONDS by default): tests of an instance killed, whose
   * read models another takes over once they lapse */
  projectionLeaseS?: number;
  /** a write's waits for its read models (tests of a read model held back past them); WRITE_WAITS by default */
  writeWaits?: WriteWaits;
  /** extra projections (tests) */
  projections?: Projection[];
  /** open without the bus (CLI) */
  withoutBus?: boolean;
  /** an already open database (tests); closed with the runtime */
  database?: Database;
  /** report models without a provider key at start (the server does; the CLI runs no engine) */
  reportEngines?: boolean;
  /** answer engines to use instead of the configured ones (tests) */
  engines?: Engines;
  /** how jobs reach the outside world (tests: a fetcher allowed to reach local fixtures); default the safe fetcher */
  outbound?: Outbound;
  /** the clock of the scheduler and the workers (tests) */
  now?: () => Date;
  /** NATS settings over infra/nats.json's (tests: a short ack wait) */
  nats?: NatsBusOptions;
  /** the job kinds run (default: every kind of the areas' manifests, src/areas/) and their sweeper's timing (tests) */
  jobs?: {
    specs?: JobSpec<any>[];
    heartbeatMs?: number;
    staleMs?: number;
    sweepEveryMs?: number;
    maxWakes?: number;
    /** the outbound client of the kinds' workers (tests: one that reaches 127.0.0.1) */
    fetch?: SafeFetch;
  };
  /** the webhook dispatcher's client and timing (tests, benchmarks) */
  webhooks?: { fetch?: SafeFetch; concurrency?: number; perEndpoint?: number; pollMs?: number; leaseS?: number; timeoutMs?: number };
  /** the email outbox's transport and timing (tests); by default SMTP_URL's server or DATA_DIR/outbox */
  email?: Partial<Pick<EmailWorkerDeps, 'transport' | 'maxAttempts' | 'backoffMs' | 'sendTimeoutMs' | 'leaseMarginMs'>> & {
    sweepEveryMs?: number;
    sweepMinAgeMs?: number;
  };
}

export async function openRuntime(config: Config, logger: Logger, options: RuntimeOptions = {}): Promise<Runtime> {
  const closers: (() => Promise<void> | void)[] = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c();
  };
  try {
    let database: Database;
    if (options.database) {
      database = options.database;
    } else if (config.embedded) {
      closers.push(lockDataDir(config.dataDir));
      mkdirSync(join(config.dataDir, 'pg'), { recursive: true });
      database = await openPglite(join(config.dataDir, 'pg'));
    } else {
      database = await openPostgres(config.databaseUrl!, config.dbPoolMax);
    }
    closers.push(() => database.close());
    await migrateLimits(database.db);
    await migrateUnrecorded(database.db);
    for (const w of areaWorkers) await w.migrate?.(database.db);

    let log: EventStore;
    if (config.eventstoreUrl) {
      const { openEsdbEventStore } = await import('./eventstore/esdb');
      log = await openEsdbEventStore(config.eventstoreUrl);
    } else {
      log = await openPostgresEventStore(database.db, { notify: database.kind === 'postgres' });
    }
    closers.push(() => log.close());
    // erasable fields are sealed with per-subject keys kept beside the read models, outside the log
    const sealer = new Sealer(
      await openSubjectKeyring(database.db, { masterKey: config.erasureMasterKey, logInSameDatabase: !config.eventstoreUrl }),
    );
    const store = sealEventStore(log, sealer);

    const bus: Bus = sealedBus(
      options.withoutBus || !config.natsUrl ? createMemoryBus({ logger }) : await openNatsBus(config.natsUrl, logger, options.nats),
      sealer,
    );
    closers.push(() => bus.close());

    const runners = new Map<string, ProjectionRunner>();
    // one read of each new stretch of the log for every projection of this instance (and the relay)
    const feed = new SharedFeed(store);
    // and one statement for the checkpoints of those that had nothing to apply in it
    const checkpoints = new CheckpointWrites(database.db, options.projectionLeaseS);
    for (const projection of [...readModels, createErasureProjection(sealer), ...(options.projections ?? [])]) {
      runners.set(projection.name, new ProjectionRunner({ projection, store, db: database.db, logger, feed, checkpoints }));
    }
    // the bus carries what workers consume (answers are large: nothing else rides along for nobody)
    const extractor = parseExtractor(config.observationExtractor);
    const relay = new ProjectionRunner({
      projection: createRelayProjection(bus, [...new Set([...busEventTypes(extractor, JOB_KINDS), ...workerBusTypes])], BUS_STREAM_PREFIXES),
      store,
      db: database.db,
      logger,
      batchSize: 500,
      feed,
      checkpoints,
    });

    // metric reads that find a website's facts out of line with its entities have it derived again (see FactsCache)
    const facts = factsCache(database.db);
    facts.realign = (websiteId) => realignSite(database.db, websiteId);
    facts.maxBytes = config.factsCacheBytes;
    facts.log = logger;
    // a process's first metric request decodes and scans with code V8 has compiled already
    warmMetrics();

    const engines =
      options.engines ??
      createEngines({
        mode: config.engineMode,
        env: process.env,
        options: config.engineCalls,
        logger: options.reportEngines === false ? undefined : logger,
      });
    const workers: { stop(): Promise<void> }[] = [];
    const followers = new Map<string, ProjectionRunner>();
    let started = false;
    // read at each wait: a test may shorten its server's (test/support/server.ts, `writeWaits`)
    const writeWaits = options.writeWaits ?? WRITE_WAITS;
    const runtime: Runtime = {
      config,
      logger,
      database,
      store,
      bus,
      runners,
      relay,
      followers,
      composed,
      engines,
      writeWaits,
      async waitForReadModels(position, names, timeoutMs = writeWaits.usualMs) {
        if (!position || !started) return true;
        const targets = names === 'all' ? [...runners.values()] : names.map((n) => runners.get(n)!);
        // waited for together: each runner learns of its waiter at once (it reads now, not at its next poll), and the
        // wait is the slowest one's, not the sum; the first that cannot get there answers false at once
        return new Promise<boolean>((resolve, reject) => {
          let left = targets.length;
          if (left === 0) resolve(true);
          for (const r of targets) {
            r.waitFor(position, timeoutMs).then((ok) => {
              if (ok) {
                if (--left === 0) resolve(true);
                return;
              }
              logger.warn({ projection: r.projection.name }, 'read model did not catch up in time; answering anyway');
              resolve(false);
            }, reject);
          }
        });
      },
      async startProjections() {
        // prepared (their checkpoint rows read and made together), then begun together (their first reads and leases
        // go together: ProjectionRunner.begin)
        await prepareRunners(database.db, [...runners.values(), relay]);
        for (const r of [...runners.values(), relay]) r.begin();
        if (database.kind === 'postgres') {
          // appends by other instances wake this one's runners at once instead of at the next poll
          const stop = await database.listen(APPENDED_CHANNEL, () => {
            for (const r of runners.values()) r.wake();
            relay.wake();
            for (const r of followers.values()) r.wake();
          });
          closers.push(stop);
        }
        started = true;
      },
      async startWorkers() {
        await migrateSweeper(database.db);
        const deps = { store, db: database.db, bus, engines, logger, now: options.now };
        const outbound = options.outbound ?? { fetch: options.jobs?.fetch ?? createSafeFetcher() };
        const areaDeps = {
          ...deps,
          config,
          options,
          db: database.db,
          outbound,
          composed,
          runtime,
          waitForReadModels: (p: Position, names: readonly ReadModelName[]) => runtime.waitForReadModels(p, names),
          async follow(projection: Projection, opts: { batchSize?: number } = {}) {
            const runner = new ProjectionRunner({ projection, store, db: database.db, logger, feed, checkpoints, startAtHead: true, ...opts });
            await runner.start();
            followers.set(projection.name, runner);
            return {
              stop: async () => {
                await runner.stop();
                followers.delete(projection.name);
              },
            };
          },
        };
        const runEnds = startRunEnds({ ...deps, waitForRuns: (p) => runtime.waitForReadModels(p, ['runs']) });
        workers.push(runEnds);
        workers.push(
          await startResponseWorkers({
            ...deps,
            extractor,
            concurrency: config.workerConcurrency,
            onOutcome: (p) => runEnds.poke(p),
          }),
        );
        workers.push(await startObservationWorkers({ ...deps, extractor }));
        workers.push(startSweeper({ db: database.db, bus, logger }));
        const specs =
          options.jobs?.specs ??
          jobSpecs({ db: database.db, engines, outbound, pitchModels: config.pitchModels, contentModel: config.contentModel, now: options.now });
        for (const spec of specs)
          workers.push(
            await startJobWorker(
              spec,
              { store, db: database.db, bus, logger, kinds: JOB_KINDS, now: options.now },
              { heartbeatMs: options.jobs?.heartbeatMs },
            ),
          );
        workers.push(
          startJobSweeper({
            db: database.db,
            store,
            bus,
            logger,
            specs,
            kinds: JOB_KINDS,
            staleMs: options.jobs?.staleMs,
            everyMs: options.jobs?.sweepEveryMs,
            maxWakes: options.jobs?.maxWakes,
          }),
        );
        // each area's own workers (src/areas/<area>.ts), in registry order
        for (const w of areaWorkers) {
          const started = await w.start(areaDeps);
          if (started) workers.push(started);
        }
        if (config.scheduler) workers.push(startScheduler({ ...deps }));
      },
      async close() {
        for (const w of workers.reverse()) await w.stop();
        await relay.stop();
        // together: their leases are given up in one statement
        await Promise.all([...runners.values()].map((r) => r.stop()));
        await closeAll();
      },
    };
    return runtime;
  } catch (err) {
    await closeAll();
    throw err;
  }
}
