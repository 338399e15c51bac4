/**
 * Picks the answer engine of every catalogue model (CONTRACT.md, "Details fixed" → Engines).
 *
 * - simulated: every model is answered by the simulated engine.
 * - live: every model gets its catalogue adapter with the key from env[api_key_env]. A model whose
 *   key is missing or empty is reported once at construction (logger.warn, and status() lists it
 *   as not configured with the variable to set), and its asks fail with EngineError
 *   'not_configured'. It is never answered by the simulated engine instead.
 */
import { type Adapter, MODELS, type Model, type ModelId } from '../domain/models';
import { createSafeFetcher, type SafeFetch } from '../net/safe-fetch';
import { createAnthropicEngine } from './anthropic';
import { createGeminiEngine } from './gemini';
import type { LiveEngineDeps, LiveEngineOptions } from './http';
import { createOpenAiCompatibleEngine } from './openai-compatible';
import { createPerplexityEngine } from './perplexity';
import { type AnswerEngine, EngineError } from './port';
import { createSerpApiEngine } from './serpapi';
import { createSimulatedEngine } from './simulated';

export type EngineMode = 'simulated' | 'live';

export const ADAPTER_FACTORIES: Record<Adapter, (deps: LiveEngineDeps) => AnswerEngine> = {
  'openai-compatible': createOpenAiCompatibleEngine,
  anthropic: createAnthropicEngine,
  gemini: createGeminiEngine,
  perplexity: createPerplexityEngine,
  serpapi: createSerpApiEngine,
};

export interface EngineStatus {
  model: ModelId;
  label: string;
  /** The adapter answering it: the catalogue's in live mode, `simulated` otherwise. */
  engine: Adapter | 'simulated';
  configured: boolean;
  /** The environment variable its key is read from (live mode needs it set). */
  api_key_env: string;
  /** One line for an operator: what answers, or what to set. */
  detail: string;
}

export interface EnginesOptions extends LiveEngineOptions {
  /** Options for one model only, over the shared ones (e.g. a lower concurrency for one provider). */
  perModel?: Partial<Record<ModelId, LiveEngineOptions>>;
  /** Simulated mode: the default seed. */
  seed?: string | number;
}

export interface CreateEnginesInput {
  mode: EngineMode;
  /** Where keys are read from; usually process.env. */
  env?: Record<string, string | undefined>;
  /** The outbound HTTP client for live adapters; default safe-fetch with its production settings. */
  fetch?: SafeFetch;
  options?: EnginesOptions;
  /** Default: the catalogue. */
  models?: readonly Model[];
  /** Receives the not-configured report at construction (a pino logger fits). */
  logger?: { warn(obj: object, msg: string): void };
}

export interface Engines {
  readonly mode: EngineMode;
  /** The engine of a catalogue model; throws for an id outside the catalogue. */
  engineFor(model: ModelId): AnswerEngine;
  /** Every model of the catalogue, in catalogue order. */
  status(): EngineStatus[];
}

function notConfigured(model: Model): AnswerEngine {
  return {
    async ask() {
      throw new EngineError('not_configured', `model ${model.id} has no provider key: set ${model.api_key_env}`, { model: model.id });
    },
  };
}

export function createEngines(input: CreateEnginesInput): Engines {
  const models = input.models ?? MODELS;
  const { perModel = {}, seed, ...shared } = input.options ?? {};
  const engines = new Map<ModelId, AnswerEngine>();
  const statuses: EngineStatus[] = [];

  if (input.mode === 'simulated') {
    const sim = createSimulatedEngine({ seed });
    for (const m of models) {
      engines.set(m.id, sim);
      statuses.push({ model: m.id, label: m.label, engine: 'simulated', configured: true, api_key_env: m.api_key_env, detail: 'simulated answers' });
    }
  } else {
    const env = input.env ?? {};
    let fetch = input.fetch;
    for (const m of models) {
      const key = env[m.api_key_env];
      if (typeof key !== 'string' || key.trim() === '') {
        engines.set(m.id, notConfigured(m));
        statuses.push({
          model: m.id,
          label: m.label,
          engine: m.adapter,
          configured: false,
          api_key_env: m.api_key_env,
          detail: `not configured: set ${m.api_key_env}`,
        });
        continue;
      }
      fetch ??= createSafeFetcher();
      const fromCatalogue: LiveEngineOptions = {};
      if (m.timeout_ms !== undefined) fromCatalogue.timeoutMs = m.timeout_ms;
      if (m.retries !== undefined) fromCatalogue.retries = m.retries;
      if (m.concurrency !== undefined) fromCatalogue.concurrency = m.concurrency;
      const options = { ...shared, ...fromCatalogue, ...perModel[m.id] };
      engines.set(m.id, ADAPTER_FACTORIES[m.adapter]({ model: m, apiKey: key.trim(), fetch, options }));
      statuses.push({
        model: m.id,
        label: m.label,
        engine: m.adapter,
        configured: true,
        api_key_env: m.api_key_env,
        detail: `live via ${m.adapter} (${m.provider_model})`,
      });
    }
    const missing = statuses.filter((s) => !s.configured);
    if (missing.length) {
      input.logger?.warn(
        { models: missing.map((s) => ({ model: s.model, api_key_env: s.api_key_env })) },
        `live engines: ${missing.length} model(s) not configured, their runs will fail: ${missing.map((s) => `${s.model} (set ${s.api_key_env})`).join(', ')}`,
      );
    }
  }

  return {
    mode: input.mode,
    engineFor(model) {
      const engine = engines.get(model);
      if (!engine) throw new Error(`unknown model ${JSON.stringify(model)}; expected one of: ${models.map((m) => m.id).join(', ')}`);
      return engine;
    },
    status: () => statuses.map((s) => ({ ...s })),
  };
}
