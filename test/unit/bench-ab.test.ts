import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchNodeOptions } from '../../bench/ab';

/** a checkout holding only a package.json with this `bench` script */
function checkout(bench?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'aivis-ab-options-'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ scripts: bench === undefined ? {} : { bench } }));
  return dir;
}

describe('the A/B bench starts each side as its own npm run bench would', () => {
  it('given a side whose bench script sets node options, then that side starts with exactly those options', () => {
    expect(benchNodeOptions(checkout('node --max-semi-space-size=32 --single-threaded-gc --import tsx bench/run.ts'))).toEqual([
      '--max-semi-space-size=32',
      '--single-threaded-gc',
      '--import',
      'tsx',
    ]);
  });

  it('given a side whose bench script sets none, then it starts with the TypeScript loader alone', () => {
    expect(benchNodeOptions(checkout('node --import tsx bench/run.ts'))).toEqual(['--import', 'tsx']);
    expect(benchNodeOptions(checkout())).toEqual(['--import', 'tsx']);
  });

  it('given this checkout, then its options are the ones its package.json gives npm run bench', () => {
    expect(benchNodeOptions('.')).toContain('--max-semi-space-size=32');
    expect(benchNodeOptions('.').slice(-2)).toEqual(['--import', 'tsx']);
  });
});
