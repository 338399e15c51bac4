import { describe, expect, it } from 'vitest';
import { blockCounts, blocksQueued } from '../../queries/metrics/blocks';
import { warmMetrics } from '../../queries/metrics/metrics';

describe('metrics warm-up', () => {
  it('given a process, when the metrics are warmed up (again), then the decoding and scans ran once in it and nothing is held or queued', () => {
    const before = { ...blockCounts };
    // a runtime started in this process (another test file of this worker) warmed them up already
    warmMetrics();
    expect(warmMetrics()).toBe(false);
    expect(blocksQueued()).toBe(0);
    expect(blockCounts).toEqual(before);
  });
});
