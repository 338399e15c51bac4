// Child process for the pitch crash test: an instance that runs pitch reports and hangs in the second model's answers
// until it is killed.
import { idempotentResultId } from '../../commands/idempotency/idempotency';
import { loadConfig } from '../../src/config';
import { newId } from '../../src/domain/ids';
import { silentLogger } from '../../src/logger';
import { openRuntime } from '../../src/runtime';
import { childTimings } from './child-protocol';
import { pitchJob } from '../../src/workers/pitch';
import { engines, PITCH_MODELS, stubOutbound, submitPitch } from './pitch-jobs';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', SCHEDULER: 'off' });
const organizationId = process.env.ORGANIZATION_ID ?? newId();
// the report's id follows from the organization and the key, before it is asked
const jobId = idempotentResultId(organizationId, 'pitch', 'crash-1');
const rt = await openRuntime(config, silentLogger(), {
  ...childTimings(),
  jobs: {
    specs: [
      pitchJob({
        outbound: stubOutbound,
        engines: engines(async (model) => {
          if (model !== PITCH_MODELS[1]) return;
          process.stdout.write(`in-step answers-${model} ${jobId}\n`);
          await new Promise(() => {});
        }),
      }),
    ],
    heartbeatMs: 100,
    staleMs: 600_000,
  },
});
await rt.startProjections();
await rt.startWorkers();
await submitPitch(rt, organizationId, 'crash-1');
