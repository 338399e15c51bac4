import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { ChildEntry } from './global-setup';

// as in global-setup.ts (not imported from it: it loads esbuild)
const BUILT = '.built';
const BUILD_FAILED = '.failed';
const pause = new Int32Array(new SharedArrayBuffer(4));

/** Waits (blocking, up to 120 s) until the run's bundles are built: global setup builds them while the first files run. */
function waitBuilt(dir: string): void {
  const deadline = Date.now() + 120_000;
  while (!existsSync(join(dir, BUILT))) {
    if (existsSync(join(dir, BUILD_FAILED))) throw new Error(`the child bundles failed to build: ${readFileSync(join(dir, BUILD_FAILED), 'utf8')}`);
    if (Date.now() > deadline) throw new Error(`the child bundles are not built after 120 s (${dir})`);
    Atomics.wait(pause, 0, 0, 20);
  }
}

/**
 * The node arguments that start `entry` (one of CHILD_ENTRIES, test/support/global-setup.ts) as a process of its own:
 * this run's bundle of it, else (outside vitest, or BUNDLE_CHILDREN=off) the source through tsx, as `npm start` does.
 */
export function nodeArgs(entry: ChildEntry): string[] {
  let dir: string | null = null;
  try {
    dir = inject('bundles') ?? null;
  } catch {
    /* outside a vitest worker */
  }
  if (!dir) return ['--import', 'tsx', entry];
  waitBuilt(dir);
  return [join(dir, entry.replace(/\.ts$/, '.mjs'))];
}
