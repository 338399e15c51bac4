import { type ChildProcess, fork, spawn } from 'node:child_process';
import { nodeArgs } from './bundles';
import { CLI_DONE } from './child-protocol';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export interface CliHost {
  /** `node --import tsx src/cli.ts ...args` with this environment, run in the host process */
  run(args: string[], env: Record<string, string>): Promise<CliResult>;
  close(): Promise<void>;
}

/**
 * A process that runs the operator CLI (`src/cli.ts`) once per call with the arguments and environment given, as
 * many CLI processes would, without loading the module graph each time (about two seconds of CPU per process through
 * tsx; the host and the CLI are this run's bundles where there are). Runs are queued: one at a time. A test of the
 * process itself (exit without a runtime, a second process refused) spawns `src/cli.ts` of its own.
 */
export function cliHost(): CliHost {
  let child: ChildProcess | null = null;
  let out = '';
  let err = '';
  let waiting: ((r: CliResult) => void) | null = null;
  let status: number | null | undefined;
  let queue = Promise.resolve();
  const settle = () => {
    const o = out.indexOf(CLI_DONE);
    const e = err.indexOf(CLI_DONE);
    if (o === -1 || e === -1 || status === undefined || !waiting) return;
    const r = { status, stdout: out.slice(0, o), stderr: err.slice(0, e) };
    out = out.slice(o + CLI_DONE.length);
    err = err.slice(e + CLI_DONE.length);
    status = undefined;
    const w = waiting;
    waiting = null;
    w(r);
  };
  const start = () => {
    // this run's bundles of the host and the CLI when there are (test/support/global-setup.ts), else both through tsx
    const host = nodeArgs('test/support/cli-host.ts');
    const cli = nodeArgs('src/cli.ts');
    const c = fork(host.at(-1)!, [cli.at(-1)!], { execArgv: host.slice(0, -1), stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
    c.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      settle();
    });
    c.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      settle();
    });
    c.on('message', (m: { status: number }) => {
      status = m.status;
      settle();
    });
    c.once('exit', (code) => {
      child = null;
      const w = waiting;
      waiting = null;
      w?.({ status: code, stdout: out, stderr: `${err}\ncli host exited with ${code}` });
    });
    return c;
  };
  return {
    run(args, env) {
      const next = queue.then(
        () =>
          new Promise<CliResult>((resolve) => {
            waiting = resolve;
            child ??= start();
            child.send({ args, env });
          }),
      );
      queue = next.then(() => undefined);
      return next;
    },
    async close() {
      await queue;
      const c = child;
      if (!c) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.disconnect();
      await exited;
    },
  };
}

/**
 * The operator CLI on the database at `databaseUrl`, without NATS, logging warnings only, each call run as a CLI process
 * would through one host process (`cliHost()`): the module graph is loaded once for all the calls. `close()` when done.
 */
export function hostedCli(databaseUrl: string): { run: (...args: string[]) => Promise<CliResult>; close: () => Promise<void> } {
  const host = cliHost();
  return {
    run: (...args) => host.run(args, { ...(process.env as Record<string, string>), DATABASE_URL: databaseUrl, NATS_URL: '', LOG_LEVEL: 'warn' }),
    close: () => host.close(),
  };
}

/**
 * A process run to its end without blocking this one (unlike spawnSync): servers of this test process go on meanwhile,
 * as they would beside an operator's CLI. `input` is written to its stdin, which is then closed.
 */
export function runProcess(args: string[], env: Record<string, string>, input = '', timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}
