import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config';
import { MODEL_IDS } from '../../src/domain/models';

// The spec: 'A report researches 20 prompts and queries four models'. PITCH_MODELS names them.
describe('PITCH_MODELS', () => {
  const models = (v?: string) => loadConfig({ PITCH_MODELS: v }).pitchModels;

  it('given none, then the catalogue first four', () => {
    expect(models()).toEqual(MODEL_IDS.slice(0, 4));
  });

  it('given four distinct catalogue ids, then those, in order', () => {
    const four = [MODEL_IDS[5], MODEL_IDS[1], MODEL_IDS[7], MODEL_IDS[0]];
    expect(models(four.join(', '))).toEqual(four);
  });

  it('given another count, a repeated id or an unknown one, then the server refuses to start, naming the variable', () => {
    for (const bad of [
      MODEL_IDS.slice(0, 3).join(','),
      MODEL_IDS.slice(0, 5).join(','),
      [MODEL_IDS[0], MODEL_IDS[0], MODEL_IDS[1], MODEL_IDS[2]].join(','),
      [...MODEL_IDS.slice(0, 3), 'no-such-model'].join(','),
    ]) {
      expect(() => models(bad), bad).toThrow(ConfigError);
      expect(() => models(bad), bad).toThrow(/^invalid configuration: PITCH_MODELS must be four distinct model ids/);
    }
  });
});
