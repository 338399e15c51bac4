// Child process for the webhook crash test: a whole runtime (projections, relay, workers) over the test's database and
// a private nats-server, delivering webhooks to a local receiver, until it is killed. Prints "started" once it runs.
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/logger';
import { openRuntime } from '../../src/runtime';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', SCHEDULER: 'off', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCHEDULE_S: '1' });
// attempts leased for 2 s, not 20: those the killed instance had in flight are due again soon (its receiver answers
// in 50 ms)
const rt = await openRuntime(config, silentLogger(), { reportEngines: false, nats: { ackWaitMs: 2000 }, webhooks: { leaseS: 2 } });
await rt.startProjections();
await rt.startWorkers();
process.stdout.write('started\n');
