// What the tests' child processes (test/support/*-child.ts, cli-host.ts) and the tests that start them agree on. Kept
// free of vitest and of the runtime's code, so that a child, bundled or not, loads nothing more by importing it.
import type { RuntimeOptions } from '../../src/runtime';

/** Written to stdout and stderr by the CLI host after each run (no CLI output contains a NUL). */
export const CLI_DONE = '\u0000cli-done\u0000\n';

/**
 * A child's timings from its environment: ACK_WAIT_MS, the bus's ack wait (work a killed instance held is redelivered
 * after it), and PROJECTION_LEASE_S, its projection leases' length (the instance taking over after a kill waits for
 * them to lapse).
 */
export function childTimings(env: NodeJS.ProcessEnv = process.env): Pick<RuntimeOptions, 'nats' | 'projectionLeaseS'> {
  return {
    nats: env.ACK_WAIT_MS ? { ackWaitMs: Number(env.ACK_WAIT_MS) } : undefined,
    projectionLeaseS: env.PROJECTION_LEASE_S ? Number(env.PROJECTION_LEASE_S) : undefined,
  };
}
