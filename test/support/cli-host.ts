import { writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pino from 'pino';
import { CLI_DONE } from './child-protocol';

/**
 * One long-lived process that runs `src/cli.ts` once per request, as `node --import tsx src/cli.ts ARGS` would: its
 * argv and environment set, the module evaluated afresh (a new URL each time; what it imports is loaded once, which
 * is most of a CLI process's CPU), its stdout and stderr those of this process, its exit code `process.exitCode`.
 * Started by `cliHost()` (test/support/cli.ts) with the entry to run, which reads the two streams up to the marker
 * written after each run.
 */

// the CLI's entry, as the host's first argument (this run's bundle of src/cli.ts, or the source through tsx)
const CLI = pathToFileURL(resolve(process.argv[2] ?? 'src/cli.ts')).href;
let runs = 0;

// the CLI logs to stderr through pino.destination(2), written asynchronously: synchronously here, so that a run's log
// lines precede the marker that ends its stderr (the same lines, in the same order, as a process of its own)
const destination = pino.destination;
(pino as { destination: unknown }).destination = (dest: number) => destination({ dest, sync: true, minLength: 0 });
process.on('disconnect', () => process.exit(0));

process.on('message', async (m: { args: string[]; env: Record<string, string> }) => {
  process.argv = [process.argv[0], fileURLToPath(CLI), ...m.args];
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, m.env);
  process.exitCode = undefined;
  let status = 0;
  try {
    await import(`${CLI}?run=${++runs}`);
    status = Number(process.exitCode ?? 0);
  } catch (err) {
    // what would have been an uncaught error in a CLI process of its own
    writeSync(2, `${(err as Error).stack ?? String(err)}\n`);
    status = 1;
  }
  process.exitCode = undefined;
  // stdout and stderr are pipes, written synchronously on Linux: everything the run wrote precedes the markers
  writeSync(1, CLI_DONE);
  writeSync(2, CLI_DONE);
  process.send!({ status });
});
