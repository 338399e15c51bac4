import { describe, expect, it } from 'vitest';
import { workerSetup } from '../../bench/workers';

describe('the workers bench runs the setup BENCH_WORKER_SETUP names', () => {
  it('given no setup named, then it runs the reported figure: two instances sharing NATS', () => {
    expect(workerSetup()).toEqual({ instances: 2, bus: 'nats' });
  });

  it('given one-nats or one-memory, then one instance runs on that bus', () => {
    expect(workerSetup('one-nats')).toEqual({ instances: 1, bus: 'nats' });
    expect(workerSetup('one-memory')).toEqual({ instances: 1, bus: 'memory' });
  });

  it('given a setup it cannot run (a misspelling, or two instances on the in-process bus), then it refuses it by name', () => {
    expect(() => workerSetup('one-nat')).toThrow('BENCH_WORKER_SETUP: expected two-nats, one-nats or one-memory, not "one-nat"');
    expect(() => workerSetup('two-memory')).toThrow('not "two-memory"');
  });
});
