/**
 * Child process of the metrics benchmark: a second instance of the app (its own runtime, facts cache and HTTP server)
 * on the same database as the first, for the two-instance load. Sent `{ join }`, it answers `{ url }` once listening;
 * sent `'cpu'`, it answers its CPU time so far (µs); sent `'close'`, it closes and exits.
 */
import { startBenchServer } from './server';

process.once('message', async (m: { join: { databaseUrl: string; key: string; organizationId: string } }) => {
  const s = await startBenchServer(0, undefined, { join: m.join });
  process.on('message', async (cmd: string) => {
    if (cmd === 'cpu') {
      const u = process.cpuUsage();
      process.send!({ cpuUs: u.user + u.system });
    } else if (cmd === 'close') {
      await s.close();
      process.exit(0);
    }
  });
  process.send!({ url: s.url });
});
