import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server';

/** A private nats-server child process with JetStream, which a test may kill and restart on the same port and store. */
export interface NatsServerProcess {
  url: string;
  port: number;
  storeDir: string;
  /** SIGKILL by default: no graceful shutdown */
  kill(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
  /** kills the server and removes its store */
  dispose(): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export async function startNatsServer(): Promise<NatsServerProcess> {
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'aivis-nats-'));
  let child: ChildProcess | null = null;

  const start = async () => {
    const p = spawn(BINARY, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    live.add(p);
    child = p;
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nats-server did not start:\n${log}`)), 10_000);
      p.stderr!.on('data', (chunk: Buffer) => {
        if (log.length < 20_000) log += chunk.toString();
        if (log.includes('Server is ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      p.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`nats-server exited with ${code}:\n${log}`));
      });
    });
    p.stderr!.resume();
  };

  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    const p = child;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill(signal);
    await exited;
    live.delete(p);
    child = null;
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    kill,
    start,
    dispose: async () => {
      await kill();
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

/** Every file under dir, concatenated: what the JetStream store keeps on disk. */
export function storeBytes(dir: string): Buffer {
  const parts: Buffer[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) parts.push(storeBytes(p));
    else parts.push(readFileSync(p));
  }
  return Buffer.concat(parts);
}
