// Child process standing in for a server: opens the store named by the environment and runs every projection (their
// leases held and renewed) until it is killed. Prints "started" once it runs.
import { loadConfig } from '../../src/config';
import { silentLogger } from '../../src/logger';
import { openRuntime } from '../../src/runtime';
import { childTimings } from './child-protocol';

const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent', SCHEDULER: 'off' });
const rt = await openRuntime(config, silentLogger(), { withoutBus: true, reportEngines: false, ...childTimings() });
await rt.startProjections();
process.stdout.write('started\n');
