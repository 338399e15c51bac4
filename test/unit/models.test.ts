import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ADAPTERS,
  CATALOGUE_FILE,
  MODEL_IDS,
  MODELS,
  SHOPPING_MODEL_IDS,
  getModel,
  isModelId,
  isShoppingModelId,
  modelIdSchema,
  parseCatalogue,
  shoppingModelIdSchema,
  type Model,
} from '../../src/domain/models';

const file = JSON.parse(readFileSync(CATALOGUE_FILE, 'utf8')) as { models: Model[] };
const withModels = (models: unknown[]) => ({ models });
const nonShopping = MODELS.find((m) => !m.shopping)!;

describe('the shipped catalogue', () => {
  it('holds exactly eleven unique lower-case identifiers', () => {
    expect(MODEL_IDS).toHaveLength(11);
    expect(new Set(MODEL_IDS).size).toBe(11);
    for (const id of MODEL_IDS) expect(id).toMatch(/^[a-z][a-z0-9-]*$/);
  });

  it('uses the spellings of the public documentation where it has them', () => {
    // CONTRACT.md, "Shapes taken from public documentation": chatgpt, perplexity, gemini
    expect(MODEL_IDS).toEqual(expect.arrayContaining(['chatgpt', 'perplexity', 'gemini']));
  });

  it('has exactly two shopping models: the first conversational assistant and the AI-mode search variant', () => {
    expect(SHOPPING_MODEL_IDS).toHaveLength(2);
    expect(SHOPPING_MODEL_IDS[0]).toBe(MODEL_IDS[0]);
    expect(SHOPPING_MODEL_IDS[1]).toMatch(/ai-mode/);
  });

  it('gives every model a label, a known adapter, a provider model and a key variable', () => {
    for (const m of MODELS) {
      expect(m.label.length).toBeGreaterThan(0);
      expect(ADAPTERS).toContain(m.adapter);
      expect(m.provider_model.length).toBeGreaterThan(0);
      expect(m.api_key_env).toMatch(/^[A-Z][A-Z0-9_]*$/);
      if (m.adapter === 'openai-compatible') expect(m.base_url).toMatch(/^https:\/\//);
    }
  });

  it('is frozen', () => {
    expect(Object.isFrozen(MODELS)).toBe(true);
    expect(Object.isFrozen(MODELS[0])).toBe(true);
    expect(Object.isFrozen(MODEL_IDS)).toBe(true);
  });
});

describe('isModelId, isShoppingModelId and getModel', () => {
  it.each([
    ...MODEL_IDS.map((id) => ({ value: id as unknown, model: true, shopping: SHOPPING_MODEL_IDS.includes(id) })),
    { value: MODEL_IDS[0].toUpperCase(), model: false, shopping: false },
    { value: ` ${MODEL_IDS[0]}`, model: false, shopping: false },
    { value: 'gpt-4', model: false, shopping: false },
    { value: '', model: false, shopping: false },
    { value: 42, model: false, shopping: false },
    { value: null, model: false, shopping: false },
    { value: undefined, model: false, shopping: false },
  ])('given $value, then model $model, shopping $shopping', ({ value, model, shopping }) => {
    expect(isModelId(value)).toBe(model);
    expect(isShoppingModelId(value)).toBe(shopping);
    if (typeof value === 'string') expect(getModel(value)?.id).toBe(model ? value : undefined);
  });
});

describe('modelIdSchema', () => {
  it.each(MODEL_IDS.map((id) => ({ id })))('given $id, then accepted', ({ id }) => {
    expect(modelIdSchema.parse(id)).toBe(id);
  });

  it.each([
    { value: 'gpt-4', message: /^unknown model "gpt-4"; expected one of: / },
    { value: 'ChatGPT', message: /unknown model "ChatGPT"/ },
    { value: '', message: /unknown model ""/ },
    { value: 7, message: /unknown model 7/ },
  ])('given $value, then rejected naming it', ({ value, message }) => {
    const r = modelIdSchema.safeParse(value);
    expect(r.success).toBe(false);
    if (!r.success) {
      expect(r.error.issues[0].message).toMatch(message);
      expect(r.error.issues[0].message).toContain(MODEL_IDS.join(', '));
    }
  });

  it('validates a models filter array with the offending value named', () => {
    const r = modelIdSchema.array().safeParse([MODEL_IDS[0], 'nope']);
    expect(r.success).toBe(false);
    if (!r.success) {
      expect(r.error.issues[0].path).toEqual([1]);
      expect(r.error.issues[0].message).toMatch(/unknown model "nope"/);
    }
  });
});

describe('shoppingModelIdSchema', () => {
  it.each(SHOPPING_MODEL_IDS.map((id) => ({ id })))('given shopping model $id, then accepted', ({ id }) => {
    expect(shoppingModelIdSchema.parse(id)).toBe(id);
  });

  it('given a catalogue model without shopping, then rejected as not available on the shopping endpoint', () => {
    const r = shoppingModelIdSchema.safeParse(nonShopping.id);
    expect(r.success).toBe(false);
    if (!r.success) {
      expect(r.error.issues[0].message).toBe(
        `model "${nonShopping.id}" is not available on the shopping endpoint; expected one of: ${SHOPPING_MODEL_IDS.join(', ')}`,
      );
    }
  });

  it('given an unknown model, then rejected as unknown', () => {
    const r = shoppingModelIdSchema.safeParse('gpt-4');
    expect(r.success).toBe(false);
    if (!r.success) expect(r.error.issues[0].message).toMatch(/^unknown model "gpt-4"/);
  });
});

describe('parseCatalogue', () => {
  it('given the shipped file, then the same models', () => {
    expect(parseCatalogue(file)).toEqual(MODELS);
  });

  it.each([
    { when: 'ten models', raw: withModels(file.models.slice(1)), error: /expected exactly 11 models, found 10/ },
    { when: 'twelve models', raw: withModels([...file.models, { ...nonShopping, id: 'extra' }]), error: /expected exactly 11 models, found 12/ },
    {
      when: 'three shopping models',
      raw: withModels(file.models.map((m) => (m.id === nonShopping.id ? { ...m, shopping: true } : m))),
      error: /expected exactly 2 shopping models, found 3/,
    },
    {
      when: 'one shopping model',
      raw: withModels(file.models.map((m) => (m.shopping && m.id !== SHOPPING_MODEL_IDS[0] ? { ...m, shopping: false } : m))),
      error: /expected exactly 2 shopping models, found 1/,
    },
    {
      when: 'a duplicate id',
      raw: withModels(file.models.map((m, i) => (i === 1 ? { ...m, id: file.models[0].id } : m))),
      error: /duplicate model id/,
    },
    {
      when: 'an upper-case id',
      raw: withModels(file.models.map((m, i) => (i === 1 ? { ...m, id: 'Perplexity' } : m))),
      error: /models\.1\.id: a model id is lower-case/,
    },
    {
      when: 'an unknown adapter',
      raw: withModels(file.models.map((m, i) => (i === 1 ? { ...m, adapter: 'carrier-pigeon' } : m))),
      error: /models\.1\.adapter/,
    },
    {
      when: 'an openai-compatible model without base_url',
      raw: withModels(file.models.map((m) => (m.adapter === 'openai-compatible' ? { ...m, base_url: undefined } : m))),
      error: /base_url is required/,
    },
    {
      when: 'an unknown field',
      raw: withModels(file.models.map((m, i) => (i === 1 ? { ...m, colour: 'blue' } : m))),
      error: /colour/,
    },
    { when: 'no models key', raw: {}, error: /models/ },
    { when: 'not an object', raw: [], error: /invalid model catalogue/ },
  ])('given $when, then it fails loudly', ({ raw, error }) => {
    expect(() => parseCatalogue(raw)).toThrow(error);
  });
});

describe('docker-compose.yml', () => {
  it('passes every engine key variable of the catalogue through to the aivis service', () => {
    const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
    for (const env of new Set(MODELS.map((m) => m.api_key_env))) expect(compose).toMatch(new RegExp(`^\\s+${env}:`, 'm'));
  });
});
