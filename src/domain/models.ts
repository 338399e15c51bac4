import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * The model catalogue (CONTRACT.md, "Model catalogue"): `infra/models.json` holds the eleven model
 * identifiers, read and validated here once, at import time. A broken catalogue stops the process
 * at start with a message naming the problem. Every model check in aivis goes through this module;
 * no identifier is written anywhere else.
 */

export const MODEL_COUNT = 11;
export const SHOPPING_MODEL_COUNT = 2;

export const ADAPTERS = ['openai-compatible', 'anthropic', 'gemini', 'perplexity', 'serpapi'] as const;
export const Adapter = z.enum(ADAPTERS);
export type Adapter = z.infer<typeof Adapter>;

export const ModelEntry = z
  .strictObject({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'a model id is lower-case letters, digits and hyphens'),
    label: z.string().min(1),
    adapter: Adapter,
    /** The provider's model name the adapter requests (for serpapi: the SerpApi engine). */
    provider_model: z.string().min(1),
    /** Base address of the provider: required for openai-compatible; the other adapters default to their provider's public API. */
    base_url: z.url().optional(),
    /** Environment variable holding the provider key. */
    api_key_env: z.string().regex(/^[A-Z][A-Z0-9_]*$/, 'an environment variable name in upper case'),
    /** Whether the shopping endpoint accepts this model. */
    shopping: z.boolean(),
    /** Ask the provider to ground its answer in a web search (see src/engines); default false. */
    web_search: z.boolean().optional(),
    /** Per-model call settings over the ENGINE_* defaults: one attempt's timeout, retries after the first attempt, calls at once. */
    timeout_ms: z.number().int().min(1000).max(600_000).optional(),
    retries: z.number().int().min(0).max(10).optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
  })
  .refine((m) => m.adapter !== 'openai-compatible' || m.base_url !== undefined, {
    message: 'base_url is required for an openai-compatible adapter',
    path: ['base_url'],
  });
export type Model = z.infer<typeof ModelEntry>;
export type ModelId = string;

const CatalogueFile = z
  .strictObject({
    $comment: z.string().optional(),
    models: z.array(ModelEntry),
  })
  .superRefine((file, ctx) => {
    const { models } = file;
    if (models.length !== MODEL_COUNT) {
      ctx.addIssue({ code: 'custom', path: ['models'], message: `expected exactly ${MODEL_COUNT} models, found ${models.length}` });
    }
    const seen = new Set<string>();
    for (const m of models) {
      if (seen.has(m.id)) ctx.addIssue({ code: 'custom', path: ['models'], message: `duplicate model id "${m.id}"` });
      seen.add(m.id);
    }
    const shopping = models.filter((m) => m.shopping).map((m) => m.id);
    if (shopping.length !== SHOPPING_MODEL_COUNT) {
      ctx.addIssue({
        code: 'custom',
        path: ['models'],
        message: `expected exactly ${SHOPPING_MODEL_COUNT} shopping models, found ${shopping.length}${shopping.length ? ` (${shopping.join(', ')})` : ''}`,
      });
    }
  });

/** Validates a parsed catalogue file; throws one Error listing every problem. */
export function parseCatalogue(raw: unknown, source = 'model catalogue'): readonly Model[] {
  const r = CatalogueFile.safeParse(raw);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`);
    throw new Error(`invalid ${source}: ${problems.join('; ')}`);
  }
  return Object.freeze(r.data.models.map((m) => Object.freeze({ ...m })));
}

/** Reads and validates a catalogue file. */
export function loadCatalogue(file: URL | string): readonly Model[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read model catalogue ${String(file)}: ${(e as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`model catalogue ${String(file)} is not JSON: ${(e as Error).message}`);
  }
  return parseCatalogue(raw, `model catalogue ${String(file)}`);
}

export const CATALOGUE_FILE = new URL('../../infra/models.json', import.meta.url);

/** The eleven models, in catalogue order. */
export const MODELS: readonly Model[] = loadCatalogue(CATALOGUE_FILE);
export const MODEL_IDS: readonly ModelId[] = Object.freeze(MODELS.map((m) => m.id));
export const SHOPPING_MODEL_IDS: readonly ModelId[] = Object.freeze(MODELS.filter((m) => m.shopping).map((m) => m.id));

const byId = new Map(MODELS.map((m) => [m.id, m]));

export const isModelId = (value: unknown): value is ModelId => typeof value === 'string' && byId.has(value);
export const isShoppingModelId = (value: unknown): value is ModelId => typeof value === 'string' && byId.get(value)?.shopping === true;

/** The catalogue entry of an id, or undefined. */
export const getModel = (id: string): Model | undefined => byId.get(id);

const show = (v: unknown) => (typeof v === 'string' || typeof v === 'object' ? JSON.stringify(v) : String(v));

/** A model identifier of the catalogue; the error names the value and the accepted ones. */
export const modelIdSchema = z.enum(MODEL_IDS as [ModelId, ...ModelId[]], {
  error: (iss) => `unknown model ${show(iss.input)}; expected one of: ${MODEL_IDS.join(', ')}`,
});

/** A model identifier the shopping endpoint accepts. */
export const shoppingModelIdSchema = z.enum(SHOPPING_MODEL_IDS as [ModelId, ...ModelId[]], {
  error: (iss) =>
    isModelId(iss.input)
      ? `model ${show(iss.input)} is not available on the shopping endpoint; expected one of: ${SHOPPING_MODEL_IDS.join(', ')}`
      : `unknown model ${show(iss.input)}; the shopping endpoint accepts: ${SHOPPING_MODEL_IDS.join(', ')}`,
});
