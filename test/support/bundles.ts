import { join } from 'node:path';
import { inject } from 'vitest';
import type { ChildEntry } from './global-setup';

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
  return dir ? [join(dir, entry.replace(/\.ts$/, '.mjs'))] : ['--import', 'tsx', entry];
}
