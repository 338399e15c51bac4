/**
 * What every real adapter shares: one provider request through safe-fetch with HTTP statuses mapped
 * to EngineErrors, and the engine shell (concurrency limit, retries, timeout, credits, latency)
 * around an adapter's single attempt.
 */
import type { Model } from '../domain/models';
import { SafeFetchError, type SafeFetch, type SafeFetchResponse } from '../net/safe-fetch';
import { excerpt, get, isRecord } from './parse';
import { type AnswerEngine, type AnswerRequest, type AnswerResult, EngineError, type ProductCard } from './port';
import { Limiter, type ResilienceOptions, resolveResilience, withRetries } from './resilience';

export interface LiveEngineOptions extends ResilienceOptions {
  /** Replaces the provider's address (the catalogue's base_url, else the adapter's default). */
  baseUrl?: string;
  /** Largest response body accepted (default 8 MiB); a larger one is bad_response. */
  maxBodyBytes?: number;
  /** Output token cap for providers that require one (Anthropic); default 4096. */
  maxOutputTokens?: number;
}

export interface LiveEngineDeps {
  model: Model;
  apiKey: string;
  fetch: SafeFetch;
  options?: LiveEngineOptions;
}

export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

export interface ProviderCall {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Serialised as JSON. */
  body?: unknown;
}

export interface ProviderIo {
  /** One provider request; resolves with the parsed JSON of a 2xx answer. Each call is one credit. */
  request(call: ProviderCall): Promise<unknown>;
}

/** What one attempt of an adapter produces; the shell adds credits and latency. */
export interface AttemptResult {
  text: string;
  citations: string[];
  products: ProductCard[];
  input_tokens?: number;
  output_tokens?: number;
  provider_model?: string;
  /** pages the engine read, cited or not (answer evidence) */
  retrieved?: string[];
  /** the queries it searched */
  search_queries?: string[];
}

export type Attempt = (req: AnswerRequest, io: ProviderIo) => Promise<AttemptResult>;

export interface LiveEngine extends AnswerEngine {
  readonly model: Model;
  readonly limiter: Limiter;
}

/** Milliseconds from a Retry-After (seconds or HTTP date) or retry-after-ms header; undefined when absent or unreadable. */
export function retryAfterFromHeaders(headers: Record<string, string>, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.round(Number(ms));
  const ra = headers['retry-after'];
  if (ra === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Math.round(Number(ra) * 1000);
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Google's RetryInfo in an error body (`error.details[].retryDelay: "12s"`). */
function retryAfterFromBody(body: unknown): number | undefined {
  const details = get(body, 'error', 'details');
  if (!Array.isArray(details)) return undefined;
  for (const d of details) {
    const delay = isRecord(d) ? d.retryDelay : undefined;
    if (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay)) return Math.round(parseFloat(delay) * 1000);
  }
  return undefined;
}

function providerMessage(body: unknown, raw: string): string {
  const candidates = [get(body, 'error', 'message'), get(body, 'error'), get(body, 'message'), get(body, 'detail'), get(body, 'detail', 'message')];
  for (const c of candidates) if (typeof c === 'string' && c.trim()) return excerpt(c);
  return raw.trim() ? excerpt(raw, 200) : '(empty body)';
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/** The EngineError for a non-2xx answer. */
export function errorForStatus(res: Pick<SafeFetchResponse, 'status' | 'headers' | 'body'>, now = Date.now()): EngineError {
  const { status } = res;
  const body = parseJson(res.body);
  const msg = `${status}: ${providerMessage(body, res.body)}`;
  const retryAfterMs = retryAfterFromHeaders(res.headers, now) ?? retryAfterFromBody(body);
  if (status === 429) {
    const code = String(get(body, 'error', 'code') ?? get(body, 'error', 'type') ?? '');
    // a spent quota (OpenAI's insufficient_quota, SerpApi's "run out of searches") does not come back by waiting
    if (code === 'insufficient_quota' || /run out of searches|exceeded your current quota/i.test(msg))
      return new EngineError('rate_limited', `quota exhausted: ${msg}`, { status, retryable: false });
    return new EngineError('rate_limited', `rate limited: ${msg}`, { status, retryAfterMs });
  }
  if (status === 401 || status === 403) return new EngineError('auth', `key refused: ${msg}`, { status });
  if (status === 408) return new EngineError('timeout', `provider timed out: ${msg}`, { status });
  if (status >= 500) return new EngineError('server', `provider error: ${msg}`, { status, retryAfterMs });
  return new EngineError('rejected', `request refused: ${msg}`, { status });
}

function errorForFetch(err: unknown, timeoutMs: number): EngineError {
  if (err instanceof SafeFetchError) {
    switch (err.code) {
      case 'TIMEOUT':
        return new EngineError('timeout', `no answer within ${timeoutMs} ms`);
      case 'BODY_TOO_LARGE':
        return new EngineError('bad_response', `answer body too large (${err.message})`);
      case 'TOO_MANY_REDIRECTS':
        return new EngineError('bad_response', 'the provider answered with a redirect, which is not followed');
      case 'BAD_URL':
      case 'BLOCKED_ADDRESS':
        return new EngineError('not_configured', `provider address refused (${err.code})`);
      case 'TLS_ERROR':
        return new EngineError('server', `TLS failure talking to the provider (${err.code})`, { retryable: false });
      default:
        return new EngineError('server', `network failure (${err.code}): ${excerpt(err.message, 200)}`);
    }
  }
  return new EngineError('server', `network failure: ${excerpt(err instanceof Error ? err.message : String(err), 200)}`);
}

/** Removes a secret from a message (providers sometimes echo part of a key; a URL may carry it). */
function scrub(err: EngineError, secret: string): EngineError {
  if (secret.length >= 4 && err.message.includes(secret)) {
    err.message = err.message.split(secret).join('[redacted]');
  }
  return err;
}

/**
 * An engine around one adapter attempt. Credits: one per provider request the successful attempt
 * made; failed attempts cost nothing.
 */
/**
 * An engine that posts one JSON request per attempt and parses the JSON answer: the base URL is the caller's option,
 * then the model's `base_url`, then the provider's default.
 */
export function createJsonEngine(
  deps: LiveEngineDeps,
  provider: {
    adapter: string;
    defaultBase?: string;
    call: (base: string, req: AnswerRequest) => ProviderCall;
    parse: (body: unknown) => AttemptResult;
  },
): LiveEngine {
  const base = deps.options?.baseUrl ?? deps.model.base_url ?? provider.defaultBase;
  if (!base) throw new Error(`model ${deps.model.id}: an ${provider.adapter} adapter needs a base_url`);
  return createLiveEngine(deps, async (req, io) => provider.parse(await io.request(provider.call(base, req))));
}

export function createLiveEngine(deps: LiveEngineDeps, attempt: Attempt): LiveEngine {
  const { model, apiKey, fetch } = deps;
  const opts = deps.options ?? {};
  const res = resolveResilience(opts);
  const maxBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const limiter = new Limiter(res.concurrency);

  const once = async (req: AnswerRequest): Promise<AnswerResult> => {
    const started = performance.now();
    const deadline = started + res.timeoutMs;
    let credits = 0;
    const io: ProviderIo = {
      async request(call) {
        const left = Math.max(1, Math.round(deadline - performance.now()));
        const headers: Record<string, string> = { accept: 'application/json', ...call.headers };
        let body: string | undefined;
        if (call.body !== undefined) {
          body = JSON.stringify(call.body);
          headers['content-type'] = 'application/json';
        }
        let r: SafeFetchResponse;
        try {
          r = await fetch(call.url, {
            method: call.method ?? (body === undefined ? 'GET' : 'POST'),
            headers,
            body,
            timeoutMs: left,
            maxBytes,
            onBodyTooLarge: 'error',
            // a redirect could carry a key header (x-api-key, x-goog-api-key) to another host
            maxRedirects: 0,
          });
        } catch (err) {
          throw errorForFetch(err, res.timeoutMs);
        }
        if (r.status < 200 || r.status >= 300) throw errorForStatus(r);
        const parsed = parseJson(r.body);
        if (parsed === undefined)
          throw new EngineError('bad_response', `answer is not JSON: ${excerpt(r.body, 120) || '(empty body)'}`, { status: r.status });
        credits++;
        return parsed;
      },
    };
    let out: AttemptResult;
    try {
      out = await attempt(req, io);
    } catch (err) {
      if (err instanceof EngineError) throw err;
      throw new EngineError('bad_response', `unreadable answer: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    const usage: AnswerResult['usage'] = { credits };
    if (out.input_tokens !== undefined) usage.input_tokens = out.input_tokens;
    if (out.output_tokens !== undefined) usage.output_tokens = out.output_tokens;
    return {
      text: out.text,
      citations: out.citations,
      products: out.products,
      usage,
      provider_model: out.provider_model || model.provider_model,
      latency_ms: Math.round(performance.now() - started),
      ...(out.retrieved?.length ? { retrieved: out.retrieved } : {}),
      ...(out.search_queries?.length ? { search_queries: out.search_queries } : {}),
    };
  };

  return {
    model,
    limiter,
    async ask(req) {
      if (req.model !== model.id) {
        throw new EngineError('rejected', `this engine answers model ${model.id}, not ${String(req.model)}`, { model: model.id });
      }
      try {
        return await limiter.run(() => withRetries(() => once(req), res));
      } catch (err) {
        if (err instanceof EngineError) {
          err.model = model.id;
          throw scrub(err, apiKey);
        }
        throw err;
      }
    },
  };
}

/** Joins a base address and a path with exactly one slash. */
export const joinUrl = (base: string, path: string): string => `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
