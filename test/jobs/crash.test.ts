import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, openPglite } from '../../src/db';
import { jobStream } from '../../src/domain/jobs';
import type { Runtime } from '../../src/runtime';
import { WORKER_NAME } from '../../src/workers/jobs';
import { probeJob } from '../../src/workers/probe';
import { natsServerForBlock } from '../support/nats-instances';
import { freshDatabase } from '../support/db';
import { jobEnded, openJobRuntime, type JobRuntimeOptions, PROBE_OF_THREE_SUCCEEDED, streamEvents } from '../support/jobs';
import { onPostgresServer } from '../support/suites';
import { seedPgliteDir } from '../support/pglite';
import { nodeArgs } from '../support/bundles';

const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** Starts an instance in a child process that requests a probe and hangs in its step 2; resolves with the job id once it is there. */
function instanceStuckInStep2(env: Record<string, string | undefined>): Promise<{ child: ChildProcess; jobId: string }> {
  const child = spawn(process.execPath, nodeArgs('test/support/job-child.ts'), {
    // its projection leases last 2 s, not 15: the instance that takes over waits for them to lapse
    env: { ...process.env, DATABASE_URL: undefined, NATS_URL: undefined, PROJECTION_LEASE_S: '2', ...env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    let out = '';
    // the three tests start theirs at once, each loading tsx and an event store (PGlite's in WebAssembly): on a loaded
    // machine that is a minute or more
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child never reached step 2:\n${out}`));
    }, 120_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /in-step 2 (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, jobId: m[1] });
      }
    });
    child.once('exit', (code) => reject(new Error(`the child exited with ${code}:\n${out}`)));
  });
}

async function kill(child: ChildProcess) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
  children.delete(child);
}

/** Kills the instance mid-step, starts another over the same database and bus, and checks the probe ends with each step once. */
async function killedMidStepThenResumed(database: Database, childEnv: Record<string, string | undefined>, next: Omit<JobRuntimeOptions, 'specs'>) {
  const { child, jobId } = await instanceStuckInStep2(childEnv);
  await kill(child);
  let rt: Runtime | null = null;
  try {
    rt = await openJobRuntime(database, { specs: [probeJob({ work: async () => {} })], ...next });
    expect(await jobEnded(rt, jobId, 60_000)).toBe('succeeded');
    const events = await streamEvents(rt, jobStream('probe', jobId));
    expect(events.map((e) => e.type)).toEqual(PROBE_OF_THREE_SUCCEEDED);
    const steps = events.filter((e) => e.type === 'ProbeStepCompleted');
    expect(steps.map((e) => e.data.step)).toEqual([1, 2, 3]);
    // step 1 by the instance that died, the rest by the one that took over
    expect(steps[0].data.worker).not.toBe(WORKER_NAME);
    expect(steps.slice(1).map((e) => e.data.worker)).toEqual([WORKER_NAME, WORKER_NAME]);
  } finally {
    await rt?.close();
  }
}

const serverOnly = onPostgresServer('job crash tests over a shared Postgres');

// the three take-overs share nothing (each its own database or data directory, child and bus): they run side by side,
// as each spends most of its time starting a process and waiting for it
describe.concurrent('take-overs', () => {
  serverOnly('a job whose instance is killed mid-step (Postgres)', () => {
    const startNats = natsServerForBlock();

    it('given NATS, when the instance dies in step 2, then JetStream delivers the job to another instance, which resumes at step 2', async () => {
      const nats = await startNats();
      const database = await freshDatabase(10, { serverSchema: true });
      // the sweeper waits a minute here: JetStream's redelivery (ack wait 2 s) is what resumes the job
      await killedMidStepThenResumed(
        database,
        { DATABASE_URL: database.url!, NATS_URL: nats.url, ACK_WAIT_MS: '2000' },
        { natsUrl: nats.url, ackWaitMs: 2000 },
      );
    }, 180_000);

    it('given the in-process bus, when the instance dies in step 2 (its messages die with it), then the sweeper of the next instance finds the job and it resumes at step 2', async () => {
      const database = await freshDatabase(10, { serverSchema: true });
      await killedMidStepThenResumed(database, { DATABASE_URL: database.url! }, { staleMs: 1000, sweepEveryMs: 300 });
    }, 180_000);
  });

  describe('a job whose embedded instance is killed mid-step (PGlite)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'aivis-jobs-crash-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10 }));

    it('given the in-process bus, when the embedded server dies in step 2, then after a restart on its data directory the job resumes at step 2', async () => {
      // the data directory as a first start leaves it (initdb'd): what is tested is the restart after the crash
      await seedPgliteDir(join(dir, 'pg'));
      const run = async () => {
        const { child, jobId } = await instanceStuckInStep2({ DATA_DIR: dir });
        await kill(child);
        return jobId;
      };
      const jobId = await run();
      const database = await openPglite(join(dir, 'pg'));
      let rt: Runtime | null = null;
      try {
        rt = await openJobRuntime(database, { specs: [probeJob({ work: async () => {} })], staleMs: 1000, sweepEveryMs: 300 });
        expect(await jobEnded(rt, jobId, 60_000)).toBe('succeeded');
        const steps = (await streamEvents(rt, jobStream('probe', jobId))).filter((e) => e.type === 'ProbeStepCompleted');
        expect(steps.map((e) => e.data.step)).toEqual([1, 2, 3]);
        expect(steps[0].data.worker).not.toBe(WORKER_NAME);
        expect(steps[1].data.worker).toBe(WORKER_NAME);
      } finally {
        await rt?.close();
      }
    }, 180_000);
  });
});
