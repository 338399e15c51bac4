import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_IDS, MODELS } from '../../src/domain/models';
import { EngineError } from '../../src/engines/port';
import { createEngines } from '../../src/engines/registry';
import { simulateAnswer } from '../../src/engines/simulated';
import { type FakeProvider, loopbackFetch, startFakeProvider } from './support';

const day = '2025-03-14';
const prompt = 'Best CRM for a small agency?';
const env = (vars: Record<string, string>) => vars;

describe('createEngines', () => {
  let server: FakeProvider;
  beforeAll(async () => {
    server = await startFakeProvider();
  });
  afterAll(() => server.close());

  it('given simulated mode, then every catalogue model answers from the simulated engine, whatever the env', async () => {
    const engines = createEngines({ mode: 'simulated', env: {}, options: { seed: 3 } });
    expect(engines.status().map((s) => s.model)).toEqual(MODEL_IDS);
    for (const s of engines.status()) expect(s).toMatchObject({ engine: 'simulated', configured: true });
    for (const model of MODEL_IDS) {
      const r = await engines.engineFor(model).ask({ model, prompt, day });
      expect(r).toEqual(simulateAnswer({ model, prompt, day }, 3));
    }
  });

  it('given live mode with some keys missing, then those models are reported at construction with their variable, and their asks fail not_configured', async () => {
    const [withKey, ...rest] = MODELS;
    const warnings: Array<{ obj: any; msg: string }> = [];
    const engines = createEngines({
      mode: 'live',
      env: env({ [withKey.api_key_env]: 'k-1', ...(rest[0].api_key_env !== withKey.api_key_env && { [rest[0].api_key_env]: '  ' }) }),
      fetch: loopbackFetch,
      logger: { warn: (obj, msg) => warnings.push({ obj, msg }) },
    });
    const missing = MODELS.filter((m) => m.api_key_env !== withKey.api_key_env);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].obj.models).toEqual(missing.map((m) => ({ model: m.id, api_key_env: m.api_key_env })));
    for (const m of missing) expect(warnings[0].msg).toContain(`${m.id} (set ${m.api_key_env})`);

    const status = engines.status();
    expect(status.find((s) => s.model === withKey.id)).toMatchObject({ configured: true, engine: withKey.adapter, api_key_env: withKey.api_key_env });
    for (const m of missing) {
      expect(status.find((s) => s.model === m.id)).toMatchObject({
        configured: false,
        engine: m.adapter,
        api_key_env: m.api_key_env,
        detail: `not configured: set ${m.api_key_env}`,
      });
      const err = await engines
        .engineFor(m.id)
        .ask({ model: m.id, prompt, day })
        .catch((e) => e);
      expect(err).toBeInstanceOf(EngineError);
      expect(err).toMatchObject({ kind: 'not_configured', retryable: false, model: m.id });
      expect(err.message).toContain(m.api_key_env);
    }
    expect(server.hits).toHaveLength(0);
  });

  it('given live mode with every key, then nothing is reported and a model asks its provider with its key', async () => {
    const keys = Object.fromEntries(MODELS.map((m) => [m.api_key_env, `key-for-${m.api_key_env}`]));
    const warnings: unknown[] = [];
    const openai = MODELS.find((m) => m.adapter === 'openai-compatible')!;
    const engines = createEngines({
      mode: 'live',
      env: keys,
      fetch: loopbackFetch,
      options: { retries: 0, perModel: { [openai.id]: { baseUrl: server.url } } },
      logger: { warn: (o) => warnings.push(o) },
    });
    expect(warnings).toEqual([]);
    expect(engines.status().every((s) => s.configured)).toBe(true);
    server.script({ body: { model: openai.provider_model, choices: [{ message: { content: 'Live answer.' } }] } });
    const r = await engines.engineFor(openai.id).ask({ model: openai.id, prompt, day });
    expect(r.text).toBe('Live answer.');
    expect(server.hits.at(-1)!.headers.authorization).toBe(`Bearer key-for-${openai.api_key_env}`);
    expect(server.hits.at(-1)!.body.model).toBe(openai.provider_model);
  });

  it('given call settings in the catalogue entry, then they override the shared ENGINE_* settings for that model only', async () => {
    const openai = MODELS.find((m) => m.adapter === 'openai-compatible')!;
    // the shared settings allow one retry; the catalogue entry given decides for its model
    const withEntry = (entry: typeof openai) =>
      createEngines({
        mode: 'live',
        env: { [openai.api_key_env]: 'k' },
        fetch: loopbackFetch,
        models: [entry],
        options: { retries: 1, backoffBaseMs: 1, backoffMaxMs: 1, perModel: { [openai.id]: { baseUrl: server.url } } },
      });
    const engines = withEntry({ ...openai, retries: 0 });
    // given: the provider keeps answering 503
    server.script({ status: 503, body: { error: { message: 'busy' } } });
    const before = server.hits.length;
    // when: the model with retries 0 in its entry is asked
    await expect(engines.engineFor(openai.id).ask({ model: openai.id, prompt, day })).rejects.toBeInstanceOf(EngineError);
    // then: one attempt, not the shared two
    expect(server.hits.length - before).toBe(1);

    const shared = withEntry(openai);
    const mid = server.hits.length;
    await expect(shared.engineFor(openai.id).ask({ model: openai.id, prompt, day })).rejects.toBeInstanceOf(EngineError);
    expect(server.hits.length - mid).toBe(2);
  });

  it('given live mode and a model id outside the catalogue, then engineFor throws naming it', () => {
    const engines = createEngines({ mode: 'live', env: {}, fetch: loopbackFetch });
    expect(() => engines.engineFor('gpt-2')).toThrow(/unknown model "gpt-2"/);
  });

  it('given the production fetcher, then a provider address on a private network is refused as not_configured', async () => {
    const openai = MODELS.find((m) => m.adapter === 'openai-compatible')!;
    const engines = createEngines({
      mode: 'live',
      env: { [openai.api_key_env]: 'k' },
      options: { retries: 0, perModel: { [openai.id]: { baseUrl: server.url } } },
    });
    await expect(engines.engineFor(openai.id).ask({ model: openai.id, prompt, day })).rejects.toMatchObject({ kind: 'not_configured' });
  });
});
