import type { Knex } from 'knex';
import { loadConfig } from '../../src/config';
import type { Database } from '../../src/db';
import { createLogger, silentLogger } from '../../src/logger';
import { openRuntime, type Runtime } from '../../src/runtime';
import type { JobSpec } from '../../src/workers/jobs';
import { until } from './until';

export interface JobRuntimeOptions {
  specs: JobSpec<any>[];
  /** a real NATS server for the bus (default: the in-process bus) */
  natsUrl?: string;
  staleMs?: number;
  sweepEveryMs?: number;
  /** keep the database open when the runtime closes (a second runtime takes it over) */
  keepDatabase?: boolean;
  workers?: boolean;
  heartbeatMs?: number;
  maxWakes?: number;
  /** JetStream's ack wait: how soon a message whose worker died is delivered again */
  ackWaitMs?: number;
}

/** An instance (event store, read models, relay, bus, the given job workers and the job sweeper) over `database`. */
export async function openJobRuntime(database: Database, o: JobRuntimeOptions): Promise<Runtime> {
  const config = loadConfig({ DATA_DIR: '/tmp/aivis-unused', LOG_LEVEL: 'silent', SCHEDULER: 'off' });
  const logger = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLogger();
  const db = o.keepDatabase ? { ...database, close: async () => {} } : database;
  const rt = await openRuntime({ ...config, embedded: database.kind === 'pglite', natsUrl: o.natsUrl ?? null }, logger, {
    database: db,
    withoutBus: !o.natsUrl,
    nats: o.ackWaitMs ? { ackWaitMs: o.ackWaitMs } : undefined,
    jobs: {
      specs: o.specs,
      heartbeatMs: o.heartbeatMs ?? 100,
      maxWakes: o.maxWakes,
      staleMs: o.staleMs ?? 60_000,
      sweepEveryMs: o.sweepEveryMs ?? 60_000,
    },
  });
  await rt.startProjections();
  if (o.workers !== false) await rt.startWorkers();
  return rt;
}

/** Waits until the jobs read model says the job ended; its status. */
export async function jobEnded(rt: Runtime, jobId: string, timeoutMs = 30_000): Promise<string> {
  return until(
    `job ${jobId} to end`,
    async () => {
      const row = await rt.database.db('rm_jobs').where('id', jobId).first('status');
      return row && (row.status === 'succeeded' || row.status === 'failed') ? (row.status as string) : undefined;
    },
    timeoutMs,
  );
}

/**
 * Waits until no slot is held (by `jobId`, or by any job), at most `until`'s default wait; the caller asserts it. A
 * job's slot is let go just after its end is appended, so a read the moment the read model has the end may still see it.
 */
export async function slotsLetGo(db: Knex, jobId?: string): Promise<void> {
  const held = async () =>
    (await db('aivis_job_slots')
      .where(jobId ? { job_id: jobId } : {})
      .first('job_id')) !== undefined;
  await until(jobId ? `job ${jobId}'s slot let go` : 'every slot let go', async () => !(await held())).catch(() => undefined);
}

/** A job stream's events, type and id, in order. */
export async function streamEvents(rt: Runtime, streamId: string) {
  return (await rt.store.readStream(streamId)).map((e) => ({ id: e.id, type: e.type, data: e.data as Record<string, unknown> }));
}

/** A gate steps wait at until it opens (a held step, as a slow engine would be). */
export function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { wait: () => opened, open: () => open() };
}

/** The stream of a three-step probe that succeeds: its request, the start, one event per step, the end. */
export const PROBE_OF_THREE_SUCCEEDED = [
  'ProbeRequested',
  'JobStarted',
  'ProbeStepCompleted',
  'ProbeStepCompleted',
  'ProbeStepCompleted',
  'JobSucceeded',
];
