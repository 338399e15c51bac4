// Child process for the job crash tests: an instance that runs probes and hangs in step 2 until it is killed.
import { requestProbe } from '../../commands/probe/request-probe';
import { loadConfig } from '../../src/config';
import { isDomainError } from '../../src/domain/errors';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newId } from '../../src/domain/ids';
import { silentLogger } from '../../src/logger';
import { openRuntime } from '../../src/runtime';
import { childTimings } from './child-protocol';
import { probeJob } from '../../src/workers/probe';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', SCHEDULER: 'off' });
const rt = await openRuntime(config, silentLogger(), {
  ...childTimings(),
  jobs: {
    specs: [
      probeJob({
        async work(step, r) {
          if (step !== 2) return;
          process.stdout.write(`in-step ${step} ${r.job_id}\n`);
          await new Promise(() => {});
        },
      }),
    ],
    heartbeatMs: 100,
    staleMs: 600_000,
  },
});
await rt.startProjections();
await rt.startWorkers();
const r = await requestProbe(
  { store: rt.store, organizationId: newId(), actor: SYSTEM_ACTOR },
  { website_id: newId(), steps: 3, step_ms: 0, fail_at_step: null },
);
if (isDomainError(r)) throw new Error(r.message);
process.stdout.write(`job ${r.job_id}\n`);
