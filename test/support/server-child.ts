// Child process standing in for a server: opens the store named by the environment and runs every projection (their
// leases held and renewed) until it is killed. Prints "started" once it runs.
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/logger';
import { openRuntime } from '../../src/runtime';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', SCHEDULER: 'off' });
// PROJECTION_LEASE_S: its projection leases' length (a test that kills it waits for them to lapse)
const rt = await openRuntime(config, silentLogger(), {
  withoutBus: true,
  reportEngines: false,
  projectionLeaseS: process.env.PROJECTION_LEASE_S ? Number(process.env.PROJECTION_LEASE_S) : undefined,
});
await rt.startProjections();
process.stdout.write('started\n');
