/**
 * The answer-engine port: one question to one model of the catalogue (infra/models.json), one
 * answer back. Adapters (simulated, openai-compatible, anthropic, gemini, perplexity, serpapi)
 * implement it; src/engines/registry.ts picks one per model.
 */
import type { ModelId } from '../domain/models';

export interface EngineLocation {
  /** A country name or an ISO 3166-1 alpha-2 code; adapters pass a two-letter code to providers that take one. */
  country: string;
  region?: string;
  city?: string;
}

export interface EnginePersona {
  name: string;
  description?: string;
}

export interface EngineEntity {
  name: string;
  /** Bare host of the entity's URL, e.g. `example.com`. */
  domain: string;
}

export interface EngineCompetitor extends EngineEntity {
  identifiers: readonly string[];
}

/** The website's entities. Only the simulated engine reads them: a real engine is never told the brand. */
export interface EngineWebsite {
  brand: EngineEntity;
  competitors: readonly EngineCompetitor[];
}

export interface AnswerRequest {
  /** A catalogue model id. */
  model: ModelId;
  prompt: string;
  location?: EngineLocation;
  persona?: EnginePersona;
  website?: EngineWebsite;
  /** The run's day, YYYY-MM-DD (UTC). */
  day: string;
  /** Simulated engine only: the seed of its answers. */
  seed?: string | number;
  /** Which sample of the run's (prompt, model, location, persona) this is; absent: 0. Only the simulated engine reads it. */
  sample?: number;
}

export interface ProductCard {
  name: string;
  brand?: string;
  merchant?: string;
  price?: number;
  /** ISO 4217 code. */
  currency?: string;
  /** 1-based, in the engine's order. */
  position: number;
  url?: string;
}

export interface AnswerUsage {
  /**
   * Credits the answer cost: 1 per provider request that the answer needed (a normal answer is 1;
   * SerpApi's AI Overview follow-up request makes it 2). Failed attempts cost nothing.
   */
  credits: number;
  input_tokens?: number;
  output_tokens?: number;
}

export interface AnswerResult {
  text: string;
  /** Cited URLs, deduplicated, in the engine's order. */
  citations: string[];
  /** Product cards; empty unless the engine showed some. */
  products: ProductCard[];
  usage: AnswerUsage;
  /** The model name the provider reports (or the one requested when it reports none). */
  provider_model: string;
  /** Duration of the attempt that produced the answer (queueing and retries excluded). */
  latency_ms: number;
  /** Pages the engine read or was given (search results, grounding chunks), cited or not; absent when not reported. */
  retrieved?: string[];
  /** The queries the engine searched; absent when not reported. */
  search_queries?: string[];
}

export interface AnswerEngine {
  ask(req: AnswerRequest): Promise<AnswerResult>;
}

/**
 * - rate_limited: 429 (retryAfterMs when the provider said how long), or a quota the provider says is exhausted (not retryable)
 * - server: 5xx, or the connection failed before an answer
 * - timeout: no complete answer within the per-call timeout (or a 408)
 * - auth: 401/403: the key is missing, wrong or lacks access
 * - rejected: another 4xx: the provider refused the request as sent (unknown model, invalid parameter)
 * - bad_response: a 2xx whose body is not the provider's answer format, or an answer without any content
 * - not_configured: no key for the model in live mode, or its address is refused
 */
export type EngineErrorKind = 'rate_limited' | 'server' | 'timeout' | 'auth' | 'rejected' | 'bad_response' | 'not_configured';

const RETRYABLE_BY_DEFAULT: Record<EngineErrorKind, boolean> = {
  rate_limited: true,
  server: true,
  timeout: true,
  auth: false,
  rejected: false,
  bad_response: false,
  not_configured: false,
};

export interface EngineErrorOptions {
  retryable?: boolean;
  retryAfterMs?: number;
  status?: number;
  model?: ModelId;
  /** Attempts made before giving up (set by the retry loop). */
  attempts?: number;
  cause?: unknown;
}

export class EngineError extends Error {
  override readonly name = 'EngineError';
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;
  model?: ModelId;
  attempts?: number;

  constructor(
    readonly kind: EngineErrorKind,
    message: string,
    options: EngineErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT[kind];
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
    if (options.model !== undefined) this.model = options.model;
    if (options.attempts !== undefined) this.attempts = options.attempts;
  }
}

export const isEngineError = (e: unknown): e is EngineError => e instanceof EngineError;
